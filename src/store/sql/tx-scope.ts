import type { StoreTx } from '../../kernel/store.js';
import type { SqlClient, SqlParam } from './sql-client.js';
import { createStoreTx } from './store-tx.js';

/**
 * One transaction's view of a connection. The `tx` handed to the caller
 * refuses work once the transaction has ended (a leaked `tx` must not write
 * into someone else's transaction), and remembers the first failed
 * statement: PostgreSQL aborts the whole transaction on any error, so both
 * dialects refuse to commit after one, even when the caller caught it.
 */
export interface TxScope {
  readonly tx: StoreTx;
  /** True once a statement has failed; `failure` is its error. */
  readonly failed: boolean;
  readonly failure: unknown;
  end(): void;
}

/** `single`: the scope allows one statement only (ReadOptions.single). */
export function createTxScope(client: SqlClient, single = false): TxScope {
  let active = true;
  let statements = 0;
  let failed = false;
  let failure: unknown;
  const check = (): void => {
    if (!active) {
      throw new Error('This store transaction has ended; use its tx only inside the callback.');
    }
  };
  const fail = (error: unknown): never => {
    if (!failed) {
      failed = true;
      failure = error;
    }
    throw error;
  };
  // No async wrapper: a statement costs one promise, not three (issue 31).
  const track = <T>(work: () => Promise<T>): Promise<T> => {
    try {
      check();
      if (single && ++statements > 1) {
        throw new Error(
          'This read was declared single-statement (ReadOptions.single) but issued a second statement; drop `single` for it.',
        );
      }
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return work().then(undefined, fail);
  };
  const guarded: SqlClient = {
    dialect: client.dialect,
    lockingReads: client.lockingReads === true,
    ...(client.chainHead ? { chainHead: client.chainHead } : {}),
    ...(client.deferAudit ? { deferAudit: client.deferAudit } : {}),
    ...(client.touchingGrants ? { touchingGrants: client.touchingGrants } : {}),
    all: (sql, params) => track(() => client.all(sql, params)),
    run: (sql, params) => track(() => client.run(sql, params)),
    ...(client.runLater && !single
      ? {
          runLater: (sql: string, params: readonly SqlParam[]) => {
            check();
            return client.runLater!(sql, params);
          },
        }
      : {}),
  };
  return {
    tx: createStoreTx(guarded),
    get failed() {
      return failed;
    },
    get failure() {
      return failure;
    },
    end() {
      active = false;
    },
  };
}

/** Throws the scope's first statement error, if there was one. */
export function assertNoFailure(scope: TxScope): void {
  if (scope.failed) throw scope.failure;
}
