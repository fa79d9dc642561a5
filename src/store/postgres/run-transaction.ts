import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { StoreTx } from '../../kernel/store.js';
import { assertNoFailure, createTxScope } from '../sql/tx-scope.js';
import { createPgClient, type DeferredBegin } from './pg-client.js';

/** serialization_failure and deadlock_detected: the transaction may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);
/**
 * Conflicting writers are retried for up to RETRY_BUDGET_MS (well inside a
 * call's 8 s timeout) with full-jitter exponential backoff, so a burst of
 * conflicts (a dozen owners' approvals at once) drains instead of surfacing
 * as an error; a conflict still there after that is a real fault.
 */
export const MAX_ATTEMPTS = 40;
export const RETRY_BUDGET_MS = 5_000;
const BACKOFF_BASE_MS = 2;
const BACKOFF_CAP_MS = 200;

/** Full jitter: a random wait up to an exponentially growing cap. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
}

export function isRetryable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    RETRYABLE.has(String((error as { code: unknown }).code))
  );
}

/** An error PostgreSQL answered (pg's DatabaseError), as against a lost connection. */
export function isServerError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'severity' in error;
}

export interface TransactionMode {
  /** Null: one statement on its own, no transaction around it (ReadOptions.single). */
  begin: string | null;
  /** Writes: refuse to commit after a failed statement. */
  write: boolean;
  /** Reads by key lock their rows (READ COMMITTED keeps invariants only with them). */
  lockingReads: boolean;
}

export const WRITE: TransactionMode = {
  begin: 'BEGIN ISOLATION LEVEL SERIALIZABLE',
  write: true,
  lockingReads: false,
};
/** A keyed write (TransactionOptions): READ COMMITTED with the rows it reads locked. */
export const KEYED: TransactionMode = {
  begin: 'BEGIN ISOLATION LEVEL READ COMMITTED',
  write: true,
  lockingReads: true,
};
export const READ: TransactionMode = {
  begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  write: false,
  lockingReads: false,
};
/** A single-statement read: the statement is its own snapshot. */
export const READ_ONE: TransactionMode = { begin: null, write: false, lockingReads: false };

/**
 * Runs `fn` in one transaction on a pooled connection. A serialization
 * failure (40001, SERIALIZABLE) or a deadlock (40P01, row locks taken in
 * different orders) rolls back and the whole of `fn` runs again after a
 * jittered backoff, in every mode, so `fn` must not have effects outside
 * `tx`. `onRetry` is told of each retry (logs, tests).
 */
export async function runTransaction<T>(
  pool: Pool,
  mode: TransactionMode,
  fn: (tx: StoreTx) => Promise<T>,
  onRetry?: (error: unknown, attempt: number) => void,
): Promise<T> {
  const started = Date.now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await runOnce(pool, mode, fn);
    } catch (error) {
      if (!isRetryable(error) || attempt >= MAX_ATTEMPTS || Date.now() - started > RETRY_BUDGET_MS)
        throw error;
      onRetry?.(error, attempt);
      await sleep(backoffMs(attempt));
    }
  }
}

async function runOnce<T>(
  pool: Pool,
  mode: TransactionMode,
  fn: (tx: StoreTx) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  // Sent with the first statement (one round trip less); a function that issues none sends nothing.
  const begin: DeferredBegin | undefined =
    mode.begin === null ? undefined : { sql: mode.begin, sent: false };
  const scope = createTxScope(
    createPgClient(client, {
      lockingReads: mode.lockingReads,
      prepared: true,
      ...(begin ? { begin } : {}),
    }),
    mode.begin === null,
  );
  try {
    let result: T;
    try {
      result = await fn(scope.tx);
    } catch (error) {
      // `fn` may have caught a serialization failure and thrown its own
      // error; the failure is what decides whether a retry can help.
      throw scope.failed && isRetryable(scope.failure) ? scope.failure : error;
    } finally {
      scope.end();
    }
    if (mode.write) assertNoFailure(scope);
    if (begin?.sent) {
      if (mode.write) await client.query('COMMIT');
      // A read-only snapshot has nothing to make durable and its answer is read: the COMMIT
      // goes on the wire and the connection back to the pool without waiting for its answer
      // (a round trip less per read). The next user's statements queue behind it on the
      // connection; one lost with the connection costs nothing this read needs.
      else void client.query('COMMIT').catch(() => undefined);
    }
    return result;
  } catch (error) {
    if (begin?.sent) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
    }
    throw error;
  } finally {
    client.release(broken);
  }
}
