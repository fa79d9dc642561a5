import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { StoreTx } from '../../kernel/store.js';
import { assertNoFailure, createTxScope } from '../sql/tx-scope.js';
import { createPgClient } from './pg-client.js';

/** serialization_failure and deadlock_detected: the transaction may simply be run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 10;

function isRetryable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    RETRYABLE.has(String((error as { code: unknown }).code))
  );
}

export interface TransactionMode {
  begin: string;
  /** Writes: retry serialization failures and refuse to commit after a failed statement. */
  write: boolean;
}

export const WRITE: TransactionMode = { begin: 'BEGIN ISOLATION LEVEL SERIALIZABLE', write: true };
export const READ: TransactionMode = {
  begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  write: false,
};

/**
 * Runs `fn` in one transaction on a pooled connection. Under SERIALIZABLE a
 * conflicting writer fails with 40001 and the whole of `fn` runs again (up
 * to MAX_ATTEMPTS), so `fn` must not have effects outside `tx`.
 */
export async function runTransaction<T>(
  pool: Pool,
  mode: TransactionMode,
  fn: (tx: StoreTx) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await runOnce(pool, mode, fn);
    } catch (error) {
      if (!mode.write || attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
      // Jittered backoff so two conflicting writers do not collide again.
      await sleep(Math.random() * Math.min(100, 2 ** attempt));
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
  const scope = createTxScope(createPgClient(client));
  try {
    await client.query(mode.begin);
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
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
