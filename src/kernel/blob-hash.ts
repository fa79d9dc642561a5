import { createHash } from 'node:crypto';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** SHA-256 of the bytes, lowercase hex: a blob's key. */
export function blobHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** True for a well-formed key; anything else is never a path or a query. */
export function isBlobHash(hash: string): boolean {
  return SHA256_HEX.test(hash);
}

/** A plain Uint8Array view of a Buffer, so every BlobStore returns the same type. */
export function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
