/**
 * The idempotent journal (spec/kernel.md §6).
 *
 * `begin` records a `prepared` entry (its own small transaction) before the
 * handler runs. The handler's write then commits in one transaction together
 * with the entry's `committed` state and receipt, so after a crash an entry
 * is either committed with its write, or still `prepared` with no write
 * (for store-backed doors), or unknown (doors with outside effects), which
 * the door's resolver decides on the next start.
 *
 * An atomic operation (`JournalSpec.atomic`: everything it does happens in
 * its `ctx.write` transaction) has no `prepared` entry and no read before
 * its handler runs: a crash before that transaction commits leaves nothing
 * to resolve. The write's own transaction ends by inserting the entry,
 * already committed: one transaction and one fsync per write instead of a
 * read and two. When the operation was settled before (an uncertain entry,
 * another instance's run, a reused operationID), that insert finds the
 * entry, the write rolls back and the earlier outcome is the answer: its
 * receipt, `mutationUncertain`, or `malformedRequest`. A write that fails
 * on its own first (its door refused, say a version conflict that an
 * earlier run of the same operation caused) looks the operation up before
 * answering (`settledOutcome`), so a settled operation answers the same
 * either way — with one read on the failure path instead of one in every
 * write (issue 31). Two runs of one operation on one instance are kept
 * apart by the in-flight set (the second is `busy`).
 *
 * Stored states map onto the wire states:
 * committed → `committed`; prepared → `prepared-not-submitted`;
 * uncertain → `submission-uncertain-do-not-use-new-id`; none → `not-found`.
 */
import { failure, type Failure } from '../errors.js';
import type { JournalEntry, Provenance } from '../records.js';
import { ONE_STATEMENT, type Store, type StoreTx, type TransactionOptions } from '../store.js';
import { agentKeyOf } from '../connection.js';

/** Journal transactions read and write entries by key only. */
const KEYED: TransactionOptions = { isolation: 'keyed' };

export const DEFAULT_RECEIPT_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The journal key of an operation: receipts and journal entries belong to
 * the agent (authority.md §2), so the same operationID from another agent is
 * another operation and learns nothing. Calls that are no agent's (the
 * owner's REST writes, internal calls) are keyed by their connection.
 */
export function journalKey(
  connection: { id: string; agent?: string | undefined },
  operationId: string,
): string {
  // The agent's key carries its id: a later agent of the same name is another agent.
  const agent = agentKeyOf(connection);
  return `${agent !== null ? `agent:${agent}` : connection.id}#${operationId}`;
}

/** The operationID a journal key was made from (`journalKey`'s inverse). */
export const operationOf = (key: string): string => key.slice(key.lastIndexOf('#') + 1);

export type OperationState =
  | { state: 'committed'; receipt: unknown }
  | { state: 'prepared-not-submitted' }
  | { state: 'submission-uncertain-do-not-use-new-id' }
  | { state: 'not-found' };

export interface OperationRequest {
  scope: string;
  operationId: string;
  /** Digest of the canonical arguments. */
  digest: string;
  tool: string;
  connection: string;
  target: string | null;
  provenance: Provenance | null;
}

/** An operation that may now execute. */
export interface OpenOperation {
  /** Its journal key (`OperationRequest.operationId`) and request digest. */
  readonly id: string;
  readonly digest: string;
  /**
   * After its write failed: the outcome of a run that settled this operation
   * before or meanwhile (`OperationRaced`), which is the call's answer
   * instead of the failure; null when none did.
   */
  settledOutcome(): Promise<OperationRaced | null>;
  /** Mark committed with `receipt` inside the write's own transaction. */
  commit(tx: StoreTx, receipt: unknown): Promise<void>;
  /** Nothing was written: forget the entry (a retry executes afresh). */
  abandon(): Promise<void>;
  /** The write may have happened: keep the entry as uncertain. */
  markUncertain(): Promise<void>;
}

export type BeginResult =
  { kind: 'replay'; receipt: unknown } | { kind: 'open'; operation: OpenOperation } | Failure;

/** What a door says about an operation left unresolved by a crash or timeout. */
export type Resolution =
  { exists: true; receipt: unknown } | { exists: false } | { exists: 'unknown' };

/**
 * Thrown inside an atomic operation's write transaction when the operation
 * is already settled (an earlier run committed it, possibly on another
 * instance, or left it uncertain): the transaction rolls back, and the call
 * answers `outcome` — the earlier receipt, `mutationUncertain`, or
 * `malformedRequest` when the earlier run had other arguments.
 */
export class OperationRaced extends Error {
  constructor(readonly outcome: { ok: true; value: unknown } | Failure) {
    super('another run of this operation committed first');
    this.name = 'OperationRaced';
  }
}

export interface BeginOptions {
  /** Everything the operation does happens in its write's transaction: no `prepared` entry. */
  atomic?: boolean;
  /** The caller already looked for a committed entry (`replay`): `begin` does not read again. */
  looked?: boolean;
}

/** What `replay` finds: the committed operation's receipt, or `malformedRequest` for other arguments. */
export type ReplayResult = { kind: 'replay'; receipt: unknown } | Failure | null;

export interface Journal {
  /**
   * Before the policy stage: an operation already committed under this key
   * answers its receipt (same digest) or `malformedRequest` (other
   * arguments), so the owner is never asked again about a call that already
   * happened; `null` when none is committed.
   */
  replay(
    request: Pick<OperationRequest, 'scope' | 'operationId' | 'digest'>,
  ): Promise<ReplayResult>;
  begin(request: OperationRequest, options?: BeginOptions): Promise<BeginResult>;
  state(scope: string, operationId: string): Promise<OperationState>;
  /**
   * Resolve every prepared or uncertain entry (of `options.scope` only, when
   * given: a door settling its own after its service came back) through the
   * resolver; returns how many changed.
   */
  resolvePending(
    resolve: (entry: JournalEntry) => Promise<Resolution>,
    options?: { scope?: string },
  ): Promise<number>;
  purgeExpired(): Promise<number>;
}

export interface JournalOptions {
  store: Store;
  retentionMs?: number;
  now?: () => number;
}

const reused = (operationId: string) =>
  failure(
    'malformedRequest',
    `operationID ${operationId} already used for a different request; use a new operationID for a new request.`,
    { field: 'operationID' },
  );

/** A settled-as-unknown operation: what the agent should check, and why a new id would be wrong. */
const uncertain = (operationId: string, tool: string) =>
  failure(
    'mutationUncertain',
    `Operation ${operationOf(operationId)} of ${tool} may or may not have been applied: it was interrupted, and nothing could confirm whether it finished. Check whether its change is there (read back what ${tool} would have changed) before doing anything else; retry only with this same operationID, never a new one (that could apply the change twice).`,
  );

const stillRunning = (operationId: string) =>
  failure(
    'busy',
    `Operation ${operationId} is still running; wait, then retry with the same operationID.`,
  );

/** What `createJournal`'s parts share: the store, the clock and the operations running here. */
interface JournalContext {
  store: Store;
  now: () => number;
  /** Keys (`keyOf`) of operations this instance is running now. */
  inFlight: Set<string>;
}

const keyOf = (scope: string, id: string) => `${scope}\u0000${id}`;

/** A prepared operation: its entry, written before the write, is settled after it. */
function openOperation(
  { store, now, inFlight }: JournalContext,
  req: OperationRequest,
): OpenOperation {
  const key = keyOf(req.scope, req.operationId);
  inFlight.add(key);
  return {
    id: req.operationId,
    digest: req.digest,
    // Its prepared entry claimed it: no other run settled it.
    settledOutcome: async () => null,
    async commit(tx, receipt) {
      const updated = await tx.journal.update(req.scope, req.operationId, {
        state: 'committed',
        receipt,
        updatedAt: now(),
      });
      if (!updated) throw new Error(`journal entry ${req.operationId} vanished before commit`);
      inFlight.delete(key);
    },
    async abandon() {
      inFlight.delete(key);
      await store.transaction(async (tx) => {
        const entry = await tx.journal.get(req.scope, req.operationId);
        if (entry?.state === 'prepared') await tx.journal.delete(req.scope, req.operationId);
      }, KEYED);
    },
    async markUncertain() {
      inFlight.delete(key);
      // Only a still-prepared entry becomes uncertain: a write that committed meanwhile stands.
      await store.transaction(async (tx) => {
        const entry = await tx.journal.get(req.scope, req.operationId);
        if (entry?.state === 'prepared') {
          await tx.journal.update(req.scope, req.operationId, {
            state: 'uncertain',
            updatedAt: now(),
          });
        }
      }, KEYED);
    },
  };
}

/** An atomic operation: its entry is first written, committed, by its write's transaction. */
function openAtomic(
  { store, now, inFlight }: JournalContext,
  req: OperationRequest,
  entry: JournalEntry,
): OpenOperation {
  const key = keyOf(req.scope, req.operationId);
  inFlight.add(key);
  // A prepared entry (left by a crashed run of an older release) is taken over, not replayed.
  const outcomeOf = (existing: JournalEntry) => {
    if (existing.digest !== req.digest) return new OperationRaced(reused(req.operationId));
    if (existing.state === 'committed')
      return new OperationRaced({ ok: true, value: existing.receipt });
    if (existing.state === 'uncertain')
      return new OperationRaced(uncertain(req.operationId, req.tool));
    return null;
  };
  // A settled operation is no longer this run's: the pipeline takes a raced
  // write as committed and abandons nothing, so leaving it in flight would
  // answer every later retry `busy` instead of its receipt or `malformedRequest`.
  const settled = (existing: JournalEntry) => {
    const raced = outcomeOf(existing);
    if (raced) inFlight.delete(key);
    return raced;
  };
  return {
    id: req.operationId,
    digest: req.digest,
    async settledOutcome() {
      const existing = await store.read(
        (tx) => tx.journal.get(req.scope, req.operationId),
        ONE_STATEMENT,
      );
      return existing && settled(existing);
    },
    async commit(tx, receipt) {
      const committed = { ...entry, state: 'committed' as const, receipt, updatedAt: now() };
      const existing = await tx.journal.insert(committed);
      if (existing) {
        // Settled before (uncertain, reused) or by another instance's run meanwhile.
        const raced = settled(existing);
        if (raced) throw raced;
        await tx.journal.update(req.scope, req.operationId, {
          state: 'committed',
          receipt,
          updatedAt: committed.updatedAt,
        });
      }
      inFlight.delete(key);
    },
    async abandon() {
      // Nothing was written, not even an entry.
      inFlight.delete(key);
    },
    async markUncertain() {
      inFlight.delete(key);
      // The write may still commit (its transaction is under way): then its
      // commit finds this entry and settles it; a committed entry stands.
      await store.transaction(
        (tx) => tx.journal.insert({ ...entry, state: 'uncertain', updatedAt: now() }),
        KEYED,
      );
    },
  };
}

export function createJournal({
  store,
  retentionMs = DEFAULT_RECEIPT_RETENTION_MS,
  now = Date.now,
}: JournalOptions): Journal {
  const inFlight = new Set<string>();
  const ctx: JournalContext = { store, now, inFlight };

  return {
    async replay(req) {
      const seen = await store.read(
        (tx) => tx.journal.get(req.scope, req.operationId),
        ONE_STATEMENT,
      );
      if (seen?.state !== 'committed') return null;
      if (seen.digest !== req.digest) return reused(req.operationId);
      return { kind: 'replay', receipt: seen.receipt };
    },

    async begin(req, options = {}) {
      const at = now();
      const entry: JournalEntry = {
        ...req,
        state: 'prepared',
        receipt: null,
        createdAt: at,
        updatedAt: at,
        expiresAt: at + retentionMs,
      };
      if (options.atomic) {
        // Looked up by the write's own transaction (its entry's insert).
        if (inFlight.has(keyOf(req.scope, req.operationId))) return stillRunning(req.operationId);
        return { kind: 'open', operation: openAtomic(ctx, req, entry) };
      }
      // Retries of committed operations are common: answer them from a read, no write transaction.
      const seen = options.looked
        ? null
        : await store.read((tx) => tx.journal.get(req.scope, req.operationId), ONE_STATEMENT);
      const existing =
        seen?.state === 'committed'
          ? seen
          : await store.transaction((tx) => tx.journal.insert(entry), KEYED);
      if (!existing) return { kind: 'open', operation: openOperation(ctx, req) };
      if (existing.digest !== req.digest) return reused(req.operationId);
      if (existing.state === 'committed') return { kind: 'replay', receipt: existing.receipt };
      if (existing.state === 'uncertain') return uncertain(req.operationId, req.tool);
      if (inFlight.has(keyOf(req.scope, req.operationId))) return stillRunning(req.operationId);
      // A prepared entry nobody is running: its write never committed. Run it.
      return { kind: 'open', operation: openOperation(ctx, req) };
    },

    async state(scope, operationId) {
      const entry = await store.read((tx) => tx.journal.get(scope, operationId), ONE_STATEMENT);
      if (!entry) return { state: 'not-found' };
      if (entry.state === 'committed') return { state: 'committed', receipt: entry.receipt };
      if (entry.state === 'uncertain') return { state: 'submission-uncertain-do-not-use-new-id' };
      return { state: 'prepared-not-submitted' };
    },

    async resolvePending(resolve, options = {}) {
      let changed = 0;
      for (const state of ['prepared', 'uncertain'] as const) {
        const entries = await store.read((tx) => tx.journal.listByState(state));
        for (const entry of entries) {
          if (options.scope !== undefined && entry.scope !== options.scope) continue;
          if (inFlight.has(keyOf(entry.scope, entry.operationId))) continue;
          const resolution = await resolve(entry);
          const next =
            resolution.exists === true
              ? { state: 'committed' as const, receipt: resolution.receipt }
              : resolution.exists === false
                ? { state: 'prepared' as const }
                : { state: 'uncertain' as const };
          if (next.state === entry.state) continue;
          await store.transaction(
            (tx) =>
              tx.journal.update(entry.scope, entry.operationId, { ...next, updatedAt: now() }),
            KEYED,
          );
          changed++;
        }
      }
      return changed;
    },

    purgeExpired: () => store.transaction((tx) => tx.journal.purgeExpired(now()), KEYED),
  };
}
