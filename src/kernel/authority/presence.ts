/**
 * The owner's presence per decision (issue 25): with `owner.presence:
 * "passkey"` — the default once the owner enrolled a passkey — approving an
 * ask or a consent request, changing policy, agents or upstream effects, and
 * changing the owner's credentials each need a fresh proof of the owner's
 * presence bound to that exact decision. A process that copied every secret
 * of the owner (the token file, a browser session) still cannot decide.
 *
 * The kernel decides *whether* a proof is needed (from the store, so every
 * instance and every surface — HTTP, the CLI deciding in process, stdio —
 * answers alike) and refuses a decision without one; *how* a proof is
 * checked (WebAuthn) is injected, so the kernel stays free of it. A kernel
 * given no verifier refuses every decision that needs presence.
 */
import { failure, type Failure } from '../errors.js';
import { digestOf } from '../digest.js';
import type { Store } from '../store.js';

/** Where the owner's passkeys are kept (generic records; the verifier writes them). */
export const PASSKEYS = 'owner-passkeys';

export const PRESENCE_MODES = ['passkey', 'none'] as const;
export type PresenceMode = (typeof PRESENCE_MODES)[number];

/**
 * One decision exactly as the owner takes it: the route and its body, plus
 * facts the kernel adds (for an approval, the digest of the previewed call),
 * so a proof for one decision never passes for another.
 */
export interface OwnerDecision {
  method: string;
  /** The route path relative to /api/v1, e.g. `approvals/ap_1/approve`. */
  path: string;
  body: unknown;
  facts?: Record<string, unknown>;
}

export const decisionDigest = (d: OwnerDecision): string =>
  digestOf({
    method: d.method.toUpperCase(),
    path: d.path,
    body: d.body ?? null,
    facts: d.facts ?? {},
  });

/** Checks one proof of presence against the digest of the decision it must be bound to. */
export interface PresenceVerifier {
  /** Accepts the proof once: a second use of the same proof is refused. */
  verify(digest: string, proof: string): Promise<true | Failure>;
}

export interface PresenceOptions {
  store: Store;
  /** The configured `owner.presence`; unset: `passkey` once a passkey exists, else `none`. */
  mode?: PresenceMode | undefined;
  verifier?: PresenceVerifier | undefined;
}

export interface Presence {
  /** Whether owner decisions need a proof now. */
  required(): Promise<boolean>;
  /** Null when `decision` may be recorded with `proof`, else the refusal to answer. */
  check(decision: OwnerDecision, proof: string | undefined): Promise<Failure | null>;
}

export const PRESENCE_NEEDED =
  'This decision needs the owner’s presence: open the Airlock inbox in your browser (airlock serve prints its address) and approve there with your passkey.';

export function createPresence({ store, mode, verifier }: PresenceOptions): Presence {
  const required = async () => {
    if (mode === 'none') return false;
    if (mode === 'passkey') return true;
    const one = await store.read((tx) => tx.records.list(PASSKEYS, { limit: 1 }));
    return one.length > 0;
  };
  return {
    required,
    async check(decision, proof) {
      if (!(await required())) return null;
      if (!proof) return failure('notAuthorized', PRESENCE_NEEDED, { presence: 'passkey' });
      if (!verifier)
        return failure(
          'notAuthorized',
          `${PRESENCE_NEEDED} (This process cannot check passkeys.)`,
          { presence: 'passkey' },
        );
      const verified = await verifier.verify(decisionDigest(decision), proof);
      return verified === true ? null : verified;
    },
  };
}
