/**
 * Group commit for keyed PostgreSQL writes (READ COMMITTED with the rows
 * they read locked: the journal, door writes, approvals' decisions, audit):
 * keyed transactions of this instance queue up, and one loop runs each
 * queued group in one transaction on one pooled connection — each function
 * in a SAVEPOINT of its own (a group of one needs none), one COMMIT (one
 * WAL flush) and one turn of the
 * audit's ordering lock for the whole group. A function that fails rolls
 * back to its savepoint and only its caller sees the error; the others
 * commit. Every caller is answered only after the COMMIT returned, so an
 * acknowledged write is durable (synchronous_commit).
 *
 * A serialization failure or deadlock anywhere in the group rolls the whole
 * group back and runs it again after a jittered backoff (within the same
 * budget as single transactions, run-transaction.ts): each function must be
 * safe to run more than once, as for any store transaction.
 *
 * Under no concurrency a group is one write, started at once: no added
 * latency. Writes that arrive while a group runs form the next group.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool, PoolClient } from 'pg';
import type { StoreTx } from '../../kernel/store.js';
import { createTxScope } from '../sql/tx-scope.js';
import { createWriteQueue, type PendingWrite, type WriteOutcome } from '../sql/write-queue.js';
import { createPgClient } from './pg-client.js';
import { backoffMs, isRetryable, RETRY_BUDGET_MS, MAX_ATTEMPTS } from './run-transaction.js';

/** Most writes in one group: bounds how long the first waits for its commit. */
export const MAX_GROUP = 32;

/** A retryable failure inside the group: the whole group runs again. */
class GroupRetry extends Error {
  constructor(readonly failure: unknown) {
    super('the write group must run again');
  }
}

export interface PgGroupWriter {
  run<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Resolves once every write queued so far has been answered. */
  drained(): Promise<void>;
  /** Groups committed so far and writes in them (for tests and benches). */
  readonly stats: { groups: number; writes: number; retries: number };
}

export function createPgGroupWriter(
  pool: Pool,
  onRetry?: (error: unknown, attempt: number) => void,
): PgGroupWriter {
  const stats = { groups: 0, writes: 0, retries: 0 };

  /** One write of the group; `alone`: the group's only write, which needs no savepoint. */
  const runOne = async (
    client: PoolClient,
    job: PendingWrite,
    alone: boolean,
  ): Promise<WriteOutcome> => {
    if (!alone) await client.query('SAVEPOINT w');
    const scope = createTxScope(createPgClient(client, true));
    let value: unknown;
    let thrown: { error: unknown } | null = null;
    try {
      value = await job.context.runInAsyncScope(job.fn, null, scope.tx);
    } catch (error) {
      thrown = { error };
    } finally {
      scope.end();
    }
    // A failed statement decides: the function may have caught it and thrown its own error.
    const failure = scope.failed ? scope.failure : thrown?.error;
    if (scope.failed && isRetryable(scope.failure)) throw new GroupRetry(scope.failure);
    if (scope.failed || thrown) {
      if (!alone) await client.query('ROLLBACK TO SAVEPOINT w');
      return { ok: false, error: thrown ? thrown.error : failure };
    }
    if (!alone) await client.query('RELEASE SAVEPOINT w');
    return { ok: true, value };
  };

  /** One attempt at the group: its outcomes once committed. */
  const attempt = async (group: PendingWrite[]): Promise<WriteOutcome[]> => {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const alone = group.length === 1;
      const outcomes: WriteOutcome[] = [];
      for (const job of group) outcomes.push(await runOne(client, job, alone));
      // A lone write that failed has nothing to commit.
      await client.query(alone && !outcomes[0]!.ok ? 'ROLLBACK' : 'COMMIT');
      return outcomes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  };

  const runGroup = async (group: PendingWrite[]): Promise<void> => {
    const started = Date.now();
    for (let tries = 1; ; tries += 1) {
      try {
        const outcomes = await attempt(group);
        stats.groups += 1;
        stats.writes += group.length;
        group.forEach((job, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) job.resolve(outcome.value);
          else job.reject(outcome.error);
        });
        return;
      } catch (error) {
        const failure = error instanceof GroupRetry ? error.failure : error;
        const again =
          isRetryable(failure) && tries < MAX_ATTEMPTS && Date.now() - started <= RETRY_BUDGET_MS;
        if (!again) {
          // Nothing of the group committed: every write fails with the cause.
          for (const job of group) job.reject(failure);
          return;
        }
        stats.retries += 1;
        onRetry?.(failure, tries);
        await sleep(backoffMs(tries));
      }
    }
  };

  const queue = createWriteQueue(MAX_GROUP, runGroup);

  return {
    stats,
    run: queue.run,
    drained: queue.drained,
  };
}
