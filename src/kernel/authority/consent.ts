/**
 * Consent: pending approvals and the grants they produce (spec/kernel.md §5).
 *
 * A grant is scoped to (connection, door, capability) and, once approved, to
 * the resource the person chose. Grants never widen: a lookup matches the
 * capability exactly, so `read` never satisfies `write` or `pdfAnnotate`.
 * Expired grants behave as never granted.
 */
import { randomUUID } from 'node:crypto';
import { failure, type Failure } from '../errors.js';
import type { Approval, Grant, ResourceRef } from '../records.js';
import { ONE_STATEMENT, type Store, type StoreTx, type TransactionOptions } from '../store.js';
import type { EventBus } from '../events/events.js';
import { agentKeyOfConnection, agentOfConnection, connectionLabel } from '../connection.js';
import { createGrantCache } from './grant-cache.js';

export const DEFAULT_GRANT_LIFETIME_MS = 15 * 60 * 1000;
/** Undecided approvals expire after this long (authority.md §2). */
export const PENDING_LIFETIME_MS = 15 * 60 * 1000;
/** Pending approvals one agent may have at once (authority.md §2, §4). */
export const MAX_PENDING_PER_AGENT = 20;

export interface ConsentRequest {
  capability: string;
  /** One line for the owner's inbox, e.g. "Claude asks to read notes". */
  summary?: string;
  lifetimeMs?: number;
}

export interface Consent {
  /** The active grant for this scope, or null. */
  find(connection: string, door: string, capability: string): Promise<Grant | null>;
  /**
   * Returns the active grant, or files (or reports) a pending approval:
   * `approvalRequired` while pending, `approvalDenied` after a recent denial.
   */
  request(connection: string, door: string, request: ConsentRequest): Promise<Grant | Failure>;
  approve(id: string, resource: ResourceRef | null): Promise<Approval | Failure>;
  deny(id: string, reason?: string): Promise<Approval | Failure>;
  /** Pending approvals, oldest first; expired ones are closed on the way. */
  pending(): Promise<Approval[]>;
  grants(connection?: string): Promise<Grant[]>;
  revoke(grantId: string): Promise<boolean>;
  /**
   * The connection ended (its 2025-era session or stdio process): its pending
   * approvals are cancelled and its grants end, since nothing can use them again.
   */
  endConnection(connection: string): Promise<void>;
  /**
   * The agent gave up waiting (its task cancelled, issue 30): a pending
   * approval is closed `cancelled` with `reason` and leaves the inbox; a
   * decision on it answers what became of it (`goneApproval`). False when it
   * was no longer pending.
   */
  withdraw(id: string, reason: string): Promise<boolean>;
}

export interface ConsentOptions {
  store: Store;
  events: EventBus;
  now?: () => number;
  /** How long a policy ask stays after its connection ended (default 30 minutes). */
  orphanMs?: number;
}

/** An approval as events and the inbox show it: the asking agent, the connection as a label. */
export function shown<T extends { connection: string }>(record: T): T & { agent: string | null } {
  return {
    ...record,
    connection: connectionLabel(record.connection),
    agent: agentOfConnection(record.connection),
  };
}

/** `agent:alice~3f9a…/session:…` → `alice`; null for connections that are no agent's. */
export { agentOfConnection };

/** How long a policy ask stays for the owner after its connection ended (`approvals.orphanMinutes`). */
export const ORPHAN_LIFETIME_MS = 30 * 60 * 1000;

/**
 * Undecided too long: 15 minutes after it was asked, or — an orphaned policy
 * ask, whose connection ended — `orphanMs` after that.
 */
export const isExpired = (a: Approval, at: number, orphanMs = ORPHAN_LIFETIME_MS) =>
  a.orphanedAt != null ? a.orphanedAt + orphanMs <= at : a.createdAt + PENDING_LIFETIME_MS <= at;

export const closed = (status: 'expired' | 'cancelled', at: number, reason?: string) => ({
  status,
  decidedAt: at,
  resource: null,
  grantId: null,
  ...(reason ? { reason } : {}),
});

/**
 * What a decision on a card that is gone answers (issue 36): a plain
 * sentence saying what became of it, never how to approve another kind.
 */
export function goneApproval(a: Approval) {
  const what = `Request ${a.id}`;
  const text =
    a.status === 'expired'
      ? `${what} expired before anyone decided it; nothing was approved. The agent's next identical call asks again.`
      : a.status === 'cancelled'
        ? `${what} was withdrawn (${a.reason ?? 'its connection ended'}); nothing was approved.`
        : `${what} was already ${a.status}; nothing changed.`;
  return failure('malformedRequest', text, { status: a.status });
}

/**
 * The agent's undecided approvals of every kind (the cap counts them
 * together). `agent` is the agent key (connection.ts `agentKey`): an
 * approval's `agent` column holds it.
 */
export async function waitingFor(
  tx: StoreTx,
  agent: string | null,
  at: number,
  orphanMs = ORPHAN_LIFETIME_MS,
) {
  // Rows from before approvals kept their agent have none; their connection names it.
  const own = await tx.approvals.listPendingOf(agent);
  const unnamed =
    agent === null
      ? []
      : (await tx.approvals.listPendingOf(null)).filter(
          (a) => agentKeyOfConnection(a.connection) === agent,
        );
  return [...own, ...unnamed].filter(
    (a) => (a.agent ?? agentKeyOfConnection(a.connection)) === agent && !isExpired(a, at, orphanMs),
  );
}

/** The 21st undecided request of one agent (authority.md §2). */
export const inboxFull = (full: Approval[]) =>
  failure(
    'busy',
    `You have ${full.length} requests waiting for the owner (at most ${MAX_PENDING_PER_AGENT}): ${full
      .map((a) => a.id)
      .join(', ')}; wait for the owner to decide them before asking again.`,
    { pending: full.map((a) => a.id), retryAfterMs: PENDING_LIFETIME_MS },
  );

/** Deciding an approval reads it by id and changes it by compare-and-set. */
export const KEYED: TransactionOptions = { isolation: 'keyed' };

export const unknownApproval = (id: string) =>
  failure('notFound', `No approval ${id}; list pending approvals and use one of their ids.`);

/** A new consent request, pending, for the owner's inbox. */
function consentRequest(
  connection: string,
  agent: string | null,
  door: string,
  capability: string,
  o: { summary: string; lifetimeMs: number; at: number },
): Approval {
  return {
    id: randomUUID(),
    kind: 'consent',
    connection,
    agent,
    door,
    capability,
    tool: null,
    digest: null,
    target: null,
    rule: null,
    preview: null,
    scope: null,
    reason: null,
    usedAt: null,
    summary: o.summary,
    status: 'pending',
    lifetimeMs: o.lifetimeMs,
    createdAt: o.at,
    decidedAt: null,
    resource: null,
    grantId: null,
  };
}

/** What a consent request answers while it stands: denied (do not ask again) or waiting. */
function waitingAnswer(approval: Approval): Failure {
  if (approval.status === 'denied')
    return failure(
      'approvalDenied',
      'The owner denied this request; do not ask again unless the owner tells you to.',
      { approvalID: approval.id },
    );
  return failure(
    'approvalRequired',
    `Waiting for the owner to approve request ${approval.id}; call this tool again after they approve it.`,
    { approvalID: approval.id },
  );
}

/** Approves a pending consent request with `resource`: its grant, in the caller's transaction. */
async function grantConsent(
  tx: StoreTx,
  id: string,
  resource: ResourceRef | null,
  now: () => number,
  orphanMs: number,
): Promise<Approval | Failure> {
  const approval = await tx.approvals.get(id);
  if (!approval) return unknownApproval(id);
  if (approval.status !== 'pending') return goneApproval(approval);
  if (approval.kind !== 'consent')
    return failure(
      'malformedRequest',
      `Approval ${id} is a policy ask; approve it with a scope ("once" or "15m"), not a resource.`,
    );
  if (approval.status === 'pending' && isExpired(approval, now(), orphanMs)) {
    const gone = await tx.approvals.decide(id, closed('expired', now()));
    return goneApproval(gone ?? { ...approval, status: 'expired' });
  }
  if (approval.status !== 'pending') {
    return failure(
      'malformedRequest',
      `Approval ${id} was already ${approval.status}; nothing changed.`,
    );
  }
  const at = now();
  const grant: Grant = {
    id: randomUUID(),
    connection: approval.connection,
    door: approval.door,
    capability: approval.capability,
    resource,
    createdAt: at,
    expiresAt: at + approval.lifetimeMs,
    revokedAt: null,
  };
  await tx.grants.insert(grant);
  const decided = await tx.approvals.decide(id, {
    status: 'approved',
    decidedAt: at,
    resource,
    grantId: grant.id,
  });
  return (
    decided ?? failure('malformedRequest', `Approval ${id} is no longer pending; nothing changed.`)
  );
}

/** Ends what a connection holds: its consent requests and grants go, its policy asks stay orphaned. */
async function endConnectionIn(
  tx: StoreTx,
  connection: string,
  at: number,
): Promise<{ cancelled: Approval[]; ended: string[] }> {
  // A consent grant belongs to its connection, so its request goes with it; a
  // policy ask is bound to the agent and the call: it stays for the owner, and
  // the agent's next identical call, from any connection, finds the decision.
  const cancelled: Approval[] = [];
  for (const a of await tx.approvals.listPending())
    if (a.connection === connection) {
      const done =
        a.kind === 'policy'
          ? await tx.approvals.orphan(a.id, at)
          : await tx.approvals.decide(
              a.id,
              closed('cancelled', at, 'the agent’s connection ended'),
            );
      if (done) cancelled.push(done);
    }
  const ended: string[] = [];
  for (const g of await tx.grants.listActive(at, connection))
    if (await tx.grants.revoke(g.id, at)) ended.push(g.id);
  return { cancelled, ended };
}

export function createConsent({
  store,
  events,
  now = Date.now,
  orphanMs = ORPHAN_LIFETIME_MS,
}: ConsentOptions): Consent {
  const kept = createGrantCache(store);
  const find = async (connection: string, door: string, capability: string) => {
    const active = await kept.active(connection, now());
    return active.find((g) => g.door === door && g.capability === capability) ?? null;
  };

  return {
    find,

    async request(connection, door, { capability, summary, lifetimeMs }) {
      const lifetime = lifetimeMs ?? DEFAULT_GRANT_LIFETIME_MS;
      const grant = await find(connection, door, capability);
      if (grant) return grant;
      // Keyed: the agent's pending list, read first, is locked until commit, so
      // its requests take turns while other agents' run alongside.
      const filed = await store.transaction(async (tx) => {
        const at = now();
        const agent = agentKeyOfConnection(connection);
        const waiting = await waitingFor(tx, agent, at);
        let latest = await tx.approvals.latest(connection, door, capability);
        if (latest?.status === 'pending' && isExpired(latest, at))
          latest = await tx.approvals.decide(latest.id, closed('expired', at));
        if (latest?.status === 'pending') return { approval: latest, fresh: false };
        // A denial stands for one lifetime, so an agent cannot nag the owner.
        if (latest?.status === 'denied' && (latest.decidedAt ?? 0) + lifetime > now()) {
          return { approval: latest, fresh: false };
        }
        // One agent cannot flood the owner's inbox (authority.md §2).
        if (waiting.length >= MAX_PENDING_PER_AGENT) return { full: waiting, approval: null };
        const approval = consentRequest(connection, agent, door, capability, {
          summary: summary ?? `${door}: ${capability} access`,
          lifetimeMs: lifetime,
          at: now(),
        });
        await tx.approvals.insert(approval);
        return { approval, fresh: true };
      }, KEYED);
      if (filed.approval === null) return inboxFull(filed.full);
      if (filed.fresh)
        events.publish({ event: 'approvalRequested', approval: shown(filed.approval) });
      return waitingAnswer(filed.approval);
    },

    async approve(id, resource) {
      // Keyed: the approval row is locked by its read, so two decisions take turns.
      const result = await store.transaction(
        (tx) => grantConsent(tx, id, resource, now, orphanMs),
        KEYED,
      );
      if (!('ok' in result)) events.publish({ event: 'approvalDecided', approval: shown(result) });
      return result;
    },

    async deny(id, reason) {
      const result = await store.transaction(async (tx) => {
        const approval = await tx.approvals.get(id);
        if (!approval) return unknownApproval(id);
        const decided = await tx.approvals.decide(id, {
          status: 'denied',
          decidedAt: now(),
          resource: null,
          grantId: null,
          reason: reason ?? null,
        });
        return (
          decided ??
          failure(
            'malformedRequest',
            `Approval ${id} was already ${approval.status}; nothing changed.`,
          )
        );
      }, KEYED);
      if (!('ok' in result)) events.publish({ event: 'approvalDecided', approval: shown(result) });
      return result;
    },

    async pending() {
      const at = now();
      const all = await store.read((tx) => tx.approvals.listPending());
      const expired = all.filter((a) => isExpired(a, at, orphanMs));
      if (expired.length)
        await store.transaction(async (tx) => {
          for (const a of expired) await tx.approvals.decide(a.id, closed('expired', at));
        });
      return all.filter((a) => !isExpired(a, at, orphanMs));
    },

    async endConnection(connection) {
      const at = now();
      const { cancelled, ended } = await store.transaction((tx) =>
        endConnectionIn(tx, connection, at),
      );
      for (const a of cancelled)
        events.publish({
          event: a.status === 'pending' ? 'approvalOrphaned' : 'approvalDecided',
          approval: shown(a),
        });
      for (const grantId of ended) events.publish({ event: 'grantRevoked', grantId });
    },
    async withdraw(id, reason) {
      const done = await store.transaction(async (tx) => {
        const a = await tx.approvals.get(id);
        if (a?.status !== 'pending') return null;
        return tx.approvals.decide(id, closed('cancelled', now(), reason));
      }, KEYED);
      if (done) events.publish({ event: 'approvalDecided', approval: shown(done) });
      return done !== null;
    },
    grants: (connection) =>
      store.read((tx) => tx.grants.listActive(now(), connection), ONE_STATEMENT),

    async revoke(grantId) {
      const revoked = await store.transaction((tx) => tx.grants.revoke(grantId, now()));
      if (revoked) events.publish({ event: 'grantRevoked', grantId });
      return revoked;
    },
  };
}
