/**
 * The relay's authentication helpers (spec/page.md "Relay" and "Wire
 * protocol"): Origin policy, timing-safe token digests, the v2 HMAC proofs
 * and the reserved event namespaces. None of them opens a socket.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** SHA-256 of a UTF-8 string, as 32 bytes. */
export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * True when `candidate`'s SHA-256 equals `expectedDigest` (32 bytes), compared
 * with `timingSafeEqual` so neither content nor length leaks.
 *
 * @example
 * tokenMatches(frame.token, sha256(config.token));
 */
export function tokenMatches(candidate: unknown, expectedDigest: Uint8Array): boolean {
  if (typeof candidate !== 'string') return false;
  return timingSafeEqual(sha256(candidate), expectedDigest);
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Loopback host names: localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackHostname(hostname: string): boolean {
  return LOOPBACK_NAMES.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * Whether a WebSocket upgrade's `Origin` may connect. With `allowed = null`
 * only exact loopback `http(s)://host[:port]` origins pass; otherwise the
 * origin must be one of the configured exact origins. A missing origin never
 * passes.
 *
 * @example
 * isOriginAllowed('http://127.0.0.1:7300'); // true
 */
export function isOriginAllowed(
  origin: string | null | undefined,
  allowed: ReadonlySet<string> | null = null,
): boolean {
  if (typeof origin !== 'string' || origin === '' || origin === 'null') return false;
  if (allowed !== null) return allowed.has(origin);
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  // Exactly an origin: no path, query, fragment or credentials.
  if (url.origin !== origin) return false;
  return isLoopbackHostname(url.hostname);
}

const RESERVED_PREFIXES = ['wu:', 'system:', 'app:'];

/** True for event names in the namespaces the framework keeps for itself. */
export function isReservedEvent(name: unknown): boolean {
  if (typeof name !== 'string') return false;
  // Trimmed and case-folded: ` WU:ready` is as reserved as `wu:ready`.
  const folded = name.trim().toLowerCase();
  return RESERVED_PREFIXES.some((p) => folded.startsWith(p));
}

/** v2 handshake strings (spec/page.md "Wire protocol" 3–4). */
export const BRIDGE_PROOF_LABEL = 'wu-mcp/v2/bridge';
export const RELAY_PROOF_LABEL = 'wu-mcp/v2/relay';

const hmac = (key: Uint8Array, message: string) =>
  createHmac('sha256', key).update(message, 'utf8').digest('base64url');

/** `base64url(HMAC-SHA256(SHA-256(token), "wu-mcp/v2/bridge\n" + Nr + "\n" + Nb + "\n" + origin))` */
export function bridgeProof(
  key: Uint8Array,
  relayNonce: string,
  bridgeNonce: string,
  origin: string,
): string {
  return hmac(key, `${BRIDGE_PROOF_LABEL}\n${relayNonce}\n${bridgeNonce}\n${origin}`);
}

/** `base64url(HMAC-SHA256(SHA-256(token), "wu-mcp/v2/relay\n" + Nb + "\n" + Nr))` */
export function relayProof(key: Uint8Array, bridgeNonce: string, relayNonce: string): string {
  return hmac(key, `${RELAY_PROOF_LABEL}\n${bridgeNonce}\n${relayNonce}`);
}

/** Constant-time comparison of two base64url proofs. */
export function proofMatches(candidate: unknown, expected: string): boolean {
  if (typeof candidate !== 'string') return false;
  return timingSafeEqual(sha256(candidate), sha256(expected));
}
