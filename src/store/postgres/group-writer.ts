/**
 * Group commit for keyed PostgreSQL writes (READ COMMITTED with the rows
 * they read locked: the journal, door writes, approvals' decisions, audit):
 * keyed transactions of this instance queue up, and a loop runs each queued
 * group in one transaction on one pooled connection — one COMMIT (one WAL
 * flush) for the group. Up to `PARALLEL_GROUPS` groups run at once, each on
 * its own connection. Every caller is answered only after the COMMIT
 * returned, so an acknowledged write is durable (synchronous_commit).
 *
 * No savepoints (two round trips per write): a write that fails on its own
 * (its function threw, or one of its statements failed) rolls the group
 * back; its caller gets the error, and the others run again as a group
 * without it. A serialization failure or deadlock anywhere rolls the whole
 * group back and runs it again after a jittered backoff (within the same
 * budget as single transactions, run-transaction.ts). Either way each
 * function must be safe to run more than once, as for any store transaction.
 *
 * Audit order (issue 31): the audit entries of the group's writes are not
 * inserted where the writes append them: `deferAudit` hands back the entry,
 * and the group ends with one simple-query message holding a multi-row
 * INSERT (which takes the audit's ordering turn, and migration 8's trigger
 * links the chain) and the COMMIT. The ordering lock is held from that
 * INSERT to the end of its COMMIT inside the server — never across a round
 * trip to this process — so groups of any instance overlap in everything
 * but their commit, and ids are drawn in commit order. The entries get their
 * id and hashes from that INSERT, before any caller is answered.
 *
 * The group's writes run at once on its connection (concurrent-group.ts):
 * while one write's statement is on the wire, the others' functions run and
 * queue theirs. Writes that meet on a row make the group run again one
 * write at a time; audit entries are inserted in the order the writes
 * finished, the serial order the group is equivalent to.
 *
 * Statements whose answer no write needs — a door's record put, the
 * journal entry's insert — are queued while the writes run
 * (concurrent-group.ts) and leave with the audit insert and the COMMIT in
 * one socket write, still prepared and pipelined: a lone ledger write is two
 * round trips in its transaction (BEGIN with the door's read; everything
 * else with the COMMIT). A queued statement that fails there aborts the
 * transaction; the group runs again one write at a time, queuing nothing,
 * so the write it was meets its own failure.
 *
 * Under no concurrency a group is one write, started at once: no added
 * latency. Writes that arrive while the groups run form the next group.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, PoolClient } from 'pg';
import type { AuditEntry } from '../../kernel/records.js';
import type { StoreTx } from '../../kernel/store.js';
import { auditInsertAndCommit } from '../sql/audit-repo.js';
import { deferredAudit } from '../sql/deferred-audit.js';
import type { SqlClient } from '../sql/sql-client.js';
import { createTxScope } from '../sql/tx-scope.js';
import { createWriteQueue, type PendingWrite } from '../sql/write-queue.js';
import { createConcurrentGroup, GroupConflict, type QueuedStatement } from './concurrent-group.js';
import { corked, createPgClient, type DeferredBegin } from './pg-client.js';
import {
  backoffMs,
  isRetryable,
  isServerError,
  RETRY_BUDGET_MS,
  MAX_ATTEMPTS,
} from './run-transaction.js';

/** Most writes in one group: bounds how long the first waits for its commit. */
export const MAX_GROUP = 32;
/** Most groups of one instance in flight at once (each holds a pooled connection). */
export const PARALLEL_GROUPS = 3;
/** Writes waiting before another group starts beside the running ones. */
export const SPILL_AT = 8;

/** A retryable failure inside the group: the whole group runs again. */
class GroupRetry extends Error {
  constructor(readonly failure: unknown) {
    super('the write group must run again');
  }
}

/** One write of the group failed on its own: the others run again without it. */
class WriteFailed extends Error {
  index = -1;
  constructor(readonly failure: unknown) {
    super('a write of the group failed');
  }
}

/** One write on `sql` (its own view of the group's connection); its audit entries and outcome. */
const runOne = async (
  sql: SqlClient,
  job: PendingWrite,
): Promise<{ value: unknown; audit: AuditEntry[] }> => {
  // Its entries are filled in by the group's INSERT before the caller sees them.
  const deferred = deferredAudit();
  const scope = createTxScope({ ...sql, deferAudit: deferred.defer });
  let value: unknown;
  let thrown: { error: unknown } | null = null;
  try {
    value = await job.context.runInAsyncScope(job.fn, null, scope.tx);
  } catch (error) {
    thrown = { error };
  } finally {
    scope.end();
  }
  if (scope.failed && scope.failure instanceof GroupConflict) throw scope.failure;
  if (scope.failed && isRetryable(scope.failure)) throw new GroupRetry(scope.failure);
  // The function may have caught a failed statement and thrown its own error: that one is answered.
  if (thrown) throw new WriteFailed(thrown.error);
  if (scope.failed) throw new WriteFailed(scope.failure);
  return { value, audit: deferred.entries };
};

/** The group's writes one after another: each write's value and the group's audit entries. */
const serially = async (client: PoolClient, group: PendingWrite[], begin: DeferredBegin) => {
  const sql = createPgClient(client, { lockingReads: true, prepared: true, begin });
  const values: unknown[] = [];
  const audit: AuditEntry[] = [];
  for (const job of group) {
    try {
      const one = await runOne(sql, job);
      values.push(one.value);
      audit.push(...one.audit);
    } catch (error) {
      if (error instanceof WriteFailed) error.index = values.length;
      throw error;
    }
  }
  return { values, audit, queued: [] };
};

/**
 * The group's writes at once (concurrent-group.ts); the audit entries in
 * the order the writes finished, the order they are equivalent to.
 */
const atOnce = async (client: PoolClient, group: PendingWrite[], begin: DeferredBegin) => {
  const lanes = createConcurrentGroup(
    createPgClient(client, { lockingReads: true, prepared: true, begin, pipelined: true }),
    group.length,
  );
  const audit: AuditEntry[] = [];
  // The writes' first statements, issued as they start, leave in one socket write.
  const running = corked(client, () =>
    group.map((job, i) =>
      runOne(lanes.client(i), job).then(
        (one) => {
          lanes.finish(i);
          audit.push(...one.audit);
          return { ok: true as const, value: one.value };
        },
        (error: unknown) => {
          lanes.finish(i);
          return { ok: false as const, error };
        },
      ),
    ),
  );
  const outcomes = await Promise.all(running);
  if (lanes.conflicted) throw new GroupConflict();
  // The first statement that failed aborted the transaction; the statements after it failed for that.
  const first = lanes.failure;
  if (first && isRetryable(first.error)) throw new GroupRetry(first.error);
  const failedAt = first ? first.index : outcomes.findIndex((outcome) => !outcome.ok);
  if (failedAt >= 0) {
    const outcome = outcomes[failedAt]!;
    const failed =
      !outcome.ok && outcome.error instanceof WriteFailed
        ? outcome.error
        : new WriteFailed(first?.error ?? (outcome.ok ? undefined : outcome.error));
    failed.index = failedAt;
    throw failed;
  }
  return {
    values: outcomes.map((outcome) => (outcome.ok ? outcome.value : undefined)),
    audit,
    queued: lanes.takeQueued(),
  };
};

/**
 * A statement the writes queued failed with the COMMIT's message: which
 * write it was is not known, so the group runs again one write at a time,
 * where nothing is queued and each write meets its own failure.
 */
class QueuedFailed extends Error {
  constructor(readonly failure: unknown) {
    super('a queued statement of the group failed');
  }
}

/**
 * The queued writes (prepared, pipelined), the audit insert and the COMMIT,
 * in one socket write: the server runs them in order, and a queued one that
 * fails aborts the transaction, so the COMMIT commits nothing.
 */
async function commitQueued(
  client: PoolClient,
  begin: DeferredBegin,
  queued: readonly QueuedStatement[],
  audit: AuditEntry[],
): Promise<void> {
  const sql = createPgClient(client, { prepared: true, pipelined: true });
  const sent = corked(client, () => {
    const issued: Promise<unknown>[] = [];
    if (!begin.sent) {
      begin.sent = true;
      issued.push(client.query(begin.sql));
    }
    for (const q of queued) issued.push(sql.run(q.sql, q.params));
    issued.push(audit.length > 0 ? auditInsertAndCommit(client, audit) : client.query('COMMIT'));
    return issued;
  });
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    const error = failed.reason as unknown;
    // Only an error PostgreSQL answered says nothing committed; a lost
    // connection leaves the COMMIT's outcome unknown, and is the writes' answer.
    throw isRetryable(error) || !isServerError(error) ? error : new QueuedFailed(error);
  }
}

export interface PgGroupWriter {
  run<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Resolves once every write queued so far has been answered. */
  drained(): Promise<void>;
  /** Groups committed so far and writes in them (for tests and benches). */
  readonly stats: { groups: number; writes: number; retries: number; conflicts: number };
}

export function createPgGroupWriter(
  pool: Pool,
  onRetry?: (error: unknown, attempt: number) => void,
): PgGroupWriter {
  const stats = { groups: 0, writes: 0, retries: 0, conflicts: 0 };

  /** One attempt at the group: each write's value once committed. */
  const attempt = async (group: PendingWrite[], concurrent: boolean): Promise<unknown[]> => {
    const client = await pool.connect();
    let broken = false;
    // Sent with the group's first statement (pg-client.ts): one round trip less per group.
    const begin: DeferredBegin = { sql: 'BEGIN ISOLATION LEVEL READ COMMITTED', sent: false };
    try {
      const { values, audit, queued } = concurrent
        ? await atOnce(client, group, begin)
        : await serially(client, group, begin);
      if (queued.length > 0) {
        await commitQueued(client, begin, queued, audit);
      } else if (audit.length > 0) {
        if (!begin.sent) await client.query(begin.sql);
        await auditInsertAndCommit(client, audit);
      } else if (begin.sent) {
        await client.query('COMMIT');
      }
      return values;
    } catch (error) {
      if (begin.sent) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
      }
      throw error;
    } finally {
      client.release(broken);
    }
  };

  const runGroup = async (group: PendingWrite[]): Promise<void> => {
    const started = Date.now();
    let pending = group;
    let concurrent = true;
    for (let tries = 1; pending.length > 0;) {
      try {
        // A lone write too: its queued statements go with its COMMIT.
        const values = await attempt(pending, concurrent);
        stats.groups += 1;
        stats.writes += pending.length;
        pending.forEach((job, i) => job.resolve(values[i]));
        return;
      } catch (error) {
        if (error instanceof QueuedFailed) {
          // Nothing committed; one write at a time, nothing is queued.
          concurrent = false;
          continue;
        }
        if (error instanceof GroupConflict) {
          // Two of its writes met: nothing committed; the group runs again one write at a time.
          stats.conflicts += 1;
          concurrent = false;
          continue;
        }
        if (error instanceof WriteFailed) {
          // Nothing committed; that write is answered, the others run again.
          pending[error.index]!.reject(error.failure);
          pending = pending.filter((_, i) => i !== error.index);
          continue;
        }
        const failure = error instanceof GroupRetry ? error.failure : error;
        const again =
          isRetryable(failure) && tries < MAX_ATTEMPTS && Date.now() - started <= RETRY_BUDGET_MS;
        if (!again) {
          // Nothing of the group committed: every write fails with the cause.
          for (const job of pending) job.reject(failure);
          return;
        }
        stats.retries += 1;
        onRetry?.(failure, tries);
        tries += 1;
        await sleep(backoffMs(tries - 1));
      }
    }
  };

  const queue = createWriteQueue(MAX_GROUP, runGroup, PARALLEL_GROUPS, SPILL_AT);

  return {
    stats,
    run: queue.run,
    drained: queue.drained,
  };
}
