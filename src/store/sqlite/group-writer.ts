/**
 * Group commit for the one SQLite writer connection: write transactions
 * queue up, and a single loop drains the queue into one SQLite transaction
 * — one COMMIT, one WAL fsync — running each queued function in turn inside
 * a SAVEPOINT of its own. A function that fails rolls back to its savepoint
 * and only its caller sees the error; the others commit. Every caller is
 * answered only after the COMMIT and then `durable` (an fdatasync of the
 * WAL file on the thread pool, instead of SQLite's own fsync on the event
 * loop) returned, so an acknowledged write is on disk. The next group may
 * run while the previous one's fsync is under way; `durableNow` lets a
 * reader wait until everything committed so far is on disk before it
 * answers, so nobody is shown a write that a power loss could still undo.
 *
 * Under no concurrency a group is one write, started at once: no added
 * latency, and no savepoint (a lone write that fails rolls the transaction
 * back). Writes that arrive while a group runs form the next group.
 *
 * Issue 31: transaction control runs as cached prepared statements; the
 * writes' audit entries are inserted together at the group's end
 * (sql/deferred-audit.ts: one multi-row INSERT per group, linked in order),
 * and the audit chain's newest link is kept on the connection (`chainHead`),
 * so linking reads nothing; the cache is dropped on any rollback and when
 * another connection (another process on the same file) changed the
 * database since the last group (`PRAGMA data_version`).
 */
import type { AuditEntry } from '../../kernel/records.js';
import type { StoreTx } from '../../kernel/store.js';
import { createAuditRepo } from '../sql/audit-repo.js';
import { deferredAudit, fillDeferred } from '../sql/deferred-audit.js';
import type { ChainHeadCache, SqlClient } from '../sql/sql-client.js';
import { assertNoFailure, createTxScope } from '../sql/tx-scope.js';
import { createWriteQueue, type PendingWrite, type WriteOutcome } from '../sql/write-queue.js';
import type { SqliteDatabase } from './connection.js';

/** Most writes in one group: bounds how long the first waits for its commit. */
export const MAX_GROUP = 64;

export interface GroupWriter {
  /** `touchingGrants`: called when `fn` first uses `tx.grants` (grants-mark.ts). */
  run<T>(fn: (tx: StoreTx) => Promise<T>, touchingGrants?: () => void): Promise<T>;
  /** Resolves once every commit made so far is durable. */
  durableNow(): Promise<void>;
  /** Resolves once every write queued so far has been answered. */
  drained(): Promise<void>;
  /** Groups committed so far and writes in them (for tests and benches). */
  readonly stats: { groups: number; writes: number };
}

export function createGroupWriter(
  db: SqliteDatabase,
  client: SqlClient,
  durable: () => Promise<void>,
): GroupWriter {
  // Settles once every fsync started so far has (a later fsync covers earlier commits too).
  let synced: Promise<void> = Promise.resolve();
  const stats = { groups: 0, writes: 0 };
  const chain: ChainHeadCache = client.chainHead ?? { head: null };
  const statement = (sql: string) => {
    const prepared = db.prepare(sql);
    return () => void prepared.run();
  };
  const begin = statement('BEGIN IMMEDIATE');
  const commit = statement('COMMIT');
  const rollback = statement('ROLLBACK');
  const savepoint = statement('SAVEPOINT w');
  const release = statement('RELEASE w');
  const rollbackTo = statement('ROLLBACK TO w');
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  let seenVersion: unknown;
  const rolledBack = () => {
    chain.head = null;
  };
  const audit = createAuditRepo(client);

  /** One write; `alone`: the group's only write, which needs no savepoint. Its audit entries join `kept`. */
  const runOne = async (
    job: PendingWrite,
    alone: boolean,
    kept: AuditEntry[],
  ): Promise<WriteOutcome> => {
    if (!alone) savepoint();
    const deferred = deferredAudit();
    const scope = createTxScope({
      ...client,
      deferAudit: deferred.defer,
      ...(job.touchingGrants ? { touchingGrants: job.touchingGrants } : {}),
    });
    try {
      let value: unknown;
      try {
        value = await job.context.runInAsyncScope(job.fn, null, scope.tx);
      } finally {
        scope.end();
      }
      assertNoFailure(scope);
      if (!alone) release();
      kept.push(...deferred.entries);
      return { ok: true, value };
    } catch (error) {
      rolledBack();
      if (db.inTransaction) {
        if (alone) rollback();
        else {
          rollbackTo();
          release();
        }
      }
      return { ok: false, error };
    }
  };

  const runGroup = async (group: PendingWrite[]): Promise<void> => {
    const outcomes: WriteOutcome[] = [];
    const alone = group.length === 1;
    const kept: AuditEntry[] = [];
    try {
      begin();
      // Another connection wrote (another process on this file): the cached head may be stale.
      const version = dataVersion.get();
      if (version !== seenVersion) rolledBack();
      seenVersion = version;
      for (const job of group) {
        outcomes.push(await runOne(job, alone, kept));
        // A lone write that failed rolled back: nothing to commit.
        if (alone && !outcomes[0]!.ok) {
          group[0]!.reject((outcomes[0] as { error: unknown }).error);
          return;
        }
        // SQLite ended the whole transaction (an I/O error, a full disk):
        // nothing of this group committed; the rest is not tried.
        if (!db.inTransaction) throw lostTransaction(outcomes[outcomes.length - 1]);
      }
      if (kept.length > 0) fillDeferred(kept, await audit.appendMany(kept));
      commit();
    } catch (error) {
      rolledBack();
      if (db.inTransaction) rollback();
      // Nothing committed: every write of the group failed, with this error
      // unless it had its own.
      for (let i = 0; i < group.length; i++) {
        const own = outcomes[i];
        group[i]!.reject(own && !own.ok ? own.error : error);
      }
      return;
    }
    stats.groups += 1;
    stats.writes += group.length;
    const sync = durable();
    synced = Promise.all([synced.catch(() => undefined), sync]).then(() => undefined);
    // Answered once on disk; the loop goes on with the next group meanwhile.
    answerWhenDurable(group, outcomes, sync);
  };

  // A group waits a few promise steps for the writes of calls under way
  // beside its first (write-queue.ts GATHER_STEPS).
  const queue = createWriteQueue(MAX_GROUP, runGroup, 1, MAX_GROUP, true);

  return {
    stats,
    run: queue.run,
    async drained() {
      await queue.drained();
      await synced.catch(() => undefined);
    },
    durableNow: () => synced.catch(() => undefined),
  };
}

/** Answers a committed group's callers once its fsync returned (or failed). */
function answerWhenDurable(
  group: PendingWrite[],
  outcomes: WriteOutcome[],
  sync: Promise<void>,
): void {
  sync.then(
    () =>
      group.forEach((job, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) job.resolve(outcome.value);
        else job.reject(outcome.error);
      }),
    (error: unknown) => {
      const lost = new Error(
        'The write committed but could not be flushed to disk; it may be lost on power failure. Check the disk, then retry with the same operationID.',
        { cause: error },
      );
      group.forEach((job, i) => {
        const outcome = outcomes[i]!;
        job.reject(outcome.ok ? lost : outcome.error);
      });
    },
  );
}

function lostTransaction(last: WriteOutcome | undefined): Error {
  const cause = last && !last.ok ? last.error : undefined;
  return new Error(
    'SQLite rolled back the whole write transaction; nothing in it was written. Retry the write.',
    { cause },
  );
}
