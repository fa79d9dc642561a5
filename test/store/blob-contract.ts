import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BlobStore } from '../../src/kernel/store.js';

export interface BlobContractOptions {
  /** How many blobs the backend holds, to check that equal bytes are stored once. */
  countStored?: () => Promise<number>;
  cleanup?: () => Promise<void>;
}

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The behaviour suite every BlobStore implementation passes. */
export function blobContract(
  name: string,
  open: () => Promise<BlobStore>,
  options: BlobContractOptions = {},
): void {
  describe(`BlobStore contract: ${name}`, () => {
    let blobs: BlobStore;
    beforeAll(async () => {
      blobs = await open();
    });
    afterAll(async () => {
      await options.cleanup?.();
    });

    it('put returns the SHA-256 lowercase hex of the bytes', async () => {
      const bytes = encode(`hello ${Math.random()}`);
      const hash = await blobs.put(bytes);
      expect(hash).toBe(sha256(bytes));
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('get returns the bytes put, as a Uint8Array', async () => {
      const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 31) % 251);
      const hash = await blobs.put(bytes);
      const back = await blobs.get(hash);
      expect(back).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(back!).equals(Buffer.from(bytes))).toBe(true);
    });

    it('empty bytes are a blob too', async () => {
      const hash = await blobs.put(new Uint8Array(0));
      expect(await blobs.get(hash)).toEqual(new Uint8Array(0));
    });

    it('putting the same bytes twice returns the same hash and stores them once', async () => {
      const bytes = encode(`twice ${Math.random()}`);
      const before = await options.countStored?.();
      const [a, b] = [await blobs.put(bytes), await blobs.put(bytes.slice())];
      expect(a).toBe(b);
      if (options.countStored) expect(await options.countStored()).toBe(before! + 1);
    });

    it('has tells whether a hash is stored', async () => {
      const hash = await blobs.put(encode(`has ${Math.random()}`));
      expect(await blobs.has(hash)).toBe(true);
      expect(await blobs.has(sha256(encode('never stored')))).toBe(false);
    });

    it('get of an unknown hash returns null', async () => {
      expect(await blobs.get(sha256(encode(`unknown ${Math.random()}`)))).toBeNull();
    });

    it('a malformed hash is never looked up: get returns null and has false', async () => {
      const hash = await blobs.put(encode(`upper ${Math.random()}`));
      for (const bad of [
        hash.toUpperCase(),
        hash.slice(1),
        `${hash}0`,
        '../../etc/passwd',
        'g'.repeat(64),
        '',
      ]) {
        expect(await blobs.get(bad)).toBeNull();
        expect(await blobs.has(bad)).toBe(false);
      }
    });
  });
}
