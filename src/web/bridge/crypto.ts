/**
 * Crypto for the v2 handshake (spec/page.md "Wire protocol" 3–4): WebCrypto
 * where the page is a secure context, the plain-TypeScript SHA-256/HMAC
 * otherwise. K = SHA-256(token) is all the bridge signs with.
 */
import { hmacSha256, sha256 } from './sha256.js';

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

/** Signs handshake strings with K = SHA-256(token): base64url(HMAC-SHA256(K, message)). */
export interface HandshakeKey {
  sign(message: string): Promise<string>;
}

export async function tokenKey(token: string): Promise<HandshakeKey> {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) {
    const digest = await subtle.digest('SHA-256', encoder.encode(token));
    const key = await subtle.importKey('raw', digest, { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    return {
      sign: async (message) =>
        base64url(new Uint8Array(await subtle.sign('HMAC', key, encoder.encode(message)))),
    };
  }
  const k = sha256(encoder.encode(token));
  return { sign: async (message) => base64url(hmacSha256(k, encoder.encode(message))) };
}

/** Comparison whose time does not depend on where the strings differ. */
export function sameProof(a: unknown, b: string): boolean {
  if (typeof a !== 'string' || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
