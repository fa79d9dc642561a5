/**
 * Integrity-protected `requestState` for the multi-round-trip fixtures
 * (SEP-2322: state round-trips through the client, so a server that acts on
 * it MUST verify it). HMAC-SHA256 under a per-process key, bound to the tool
 * that minted it, with an expiry.
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

const TTL_MS = 10 * 60 * 1000;

export interface StatePayload {
  /** The tool that minted the state; another tool's state is rejected. */
  tool: string;
  round: number;
  data?: Record<string, unknown>;
}

export interface RequestStateSeal {
  seal(payload: StatePayload): string;
  /** The payload, or null when the state was forged, altered, expired or minted for another tool. */
  open(state: string, tool: string): StatePayload | null;
}

export function createRequestStateSeal(key: Buffer = randomBytes(32)): RequestStateSeal {
  const mac = (body: string) => createHmac('sha256', key).update(body).digest();
  return {
    seal(payload) {
      const body = Buffer.from(
        JSON.stringify({ ...payload, nonce: randomUUID(), exp: Date.now() + TTL_MS }),
      ).toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    open(state, tool) {
      const [body, tag, extra] = state.split('.');
      if (!body || !tag || extra !== undefined) return null;
      const given = Buffer.from(tag, 'base64url');
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      let parsed: StatePayload & { exp?: unknown };
      try {
        parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as typeof parsed;
      } catch {
        return null;
      }
      if (parsed.tool !== tool || typeof parsed.exp !== 'number' || parsed.exp < Date.now())
        return null;
      return {
        tool: parsed.tool,
        round: parsed.round,
        ...(parsed.data ? { data: parsed.data } : {}),
      };
    },
  };
}
