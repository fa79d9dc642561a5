/** WebCrypto helpers for the v2 handshake (spec/page.md "Wire protocol" 3–4). */
import { BridgeError } from './errors.js';

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 32 random bytes, base64url. */
export function randomNonce(): string {
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  return base64url(bytes);
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s)
    throw new BridgeError(
      'WU_MCP_CRYPTO_UNAVAILABLE',
      'WebCrypto is unavailable (the page is not a secure context); serve it from https:// or loopback.',
    );
  return s;
}

/** K = SHA-256(token) as a non-extractable HMAC-SHA256 key. */
export async function tokenKey(token: string): Promise<CryptoKey> {
  const digest = await subtle().digest('SHA-256', encoder.encode(token));
  return subtle().importKey('raw', digest, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export async function hmac(key: CryptoKey, message: string): Promise<string> {
  return base64url(new Uint8Array(await subtle().sign('HMAC', key, encoder.encode(message))));
}

/** Comparison whose time does not depend on where the strings differ. */
export function sameProof(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
