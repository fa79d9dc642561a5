/**
 * The relay's answer to one `auth` frame (spec/page.md "Wire protocol" 3–6),
 * as a pure decision: admit with a reply, or refuse with a code. v2 proves
 * the token with HMAC over both nonces and the Origin; v1 sends the token
 * (compared by digest, timing-safe); insecure mode needs a relay without a
 * token that runs with WU_MCP_INSECURE=1. A bridge nonce is never accepted
 * twice, and a valid newcomer never replaces the active bridge.
 */
import { bridgeProof, proofMatches, relayProof, tokenMatches } from './auth.js';

export type AuthDecision =
  | { admit: true; reply: Record<string, unknown> }
  | { admit: false; code: 'WU_MCP_AUTH_FAILED' | 'WU_MCP_BRIDGE_ACTIVE'; version: 1 | 2 };

export interface HandshakeContext {
  /** SHA-256 of the relay token, or null in insecure mode. */
  tokenDigest: Uint8Array | null;
  insecure: boolean;
  relayNonce: string;
  /** The Origin of the socket's upgrade request. */
  origin: string;
  nonces: NonceLedger;
  /** Whether another bridge is authenticated right now. */
  bridgeActive: boolean;
}

const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

/** Bridge nonces already used (bounded, oldest forgotten first). */
export class NonceLedger {
  private readonly seen = new Set<string>();
  constructor(private readonly max = 10_000) {}
  /** Records `nonce`; false when it was already used. */
  use(nonce: string): boolean {
    if (this.seen.has(nonce)) return false;
    if (this.seen.size >= this.max) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
    this.seen.add(nonce);
    return true;
  }
}

const failed = (version: 1 | 2 = 2): AuthDecision => ({
  admit: false,
  code: 'WU_MCP_AUTH_FAILED',
  version,
});
const active = (version: 1 | 2 = 2): AuthDecision => ({
  admit: false,
  code: 'WU_MCP_BRIDGE_ACTIVE',
  version,
});

export function decideAuth(frame: Record<string, unknown>, ctx: HandshakeContext): AuthDecision {
  if (frame.version === undefined && 'token' in frame) {
    if (!ctx.tokenDigest || !tokenMatches(frame.token, ctx.tokenDigest)) return failed(1);
    if (ctx.bridgeActive) return active(1);
    return { admit: true, reply: { type: 'auth_result', success: true } };
  }
  if (frame.version !== 2) return failed();
  if (frame.insecure === true) {
    if (!(ctx.insecure && ctx.tokenDigest === null)) return failed();
    if (ctx.bridgeActive) return active();
    return { admit: true, reply: { type: 'auth_ok', version: 2, insecure: true } };
  }
  const nonce = frame.nonce;
  if (!ctx.tokenDigest || typeof nonce !== 'string' || !NONCE.test(nonce)) return failed();
  // Burnt even when the proof is wrong: a nonce is good for one attempt.
  if (!ctx.nonces.use(nonce)) return failed();
  const expected = bridgeProof(ctx.tokenDigest, ctx.relayNonce, nonce, ctx.origin);
  if (!proofMatches(frame.proof, expected)) return failed();
  if (ctx.bridgeActive) return active();
  return {
    admit: true,
    reply: {
      type: 'auth_ok',
      version: 2,
      proof: relayProof(ctx.tokenDigest, nonce, ctx.relayNonce),
    },
  };
}
