import pg from 'pg';
import type { ReadOptions, Store, StoreTx, TransactionOptions } from '../../kernel/store.js';
import { createNestingGuard } from '../sql/nesting-guard.js';
import { migrate } from './migrations.js';
import { isRetryable, READ, READ_ONE, runTransaction, WRITE } from './run-transaction.js';
import { createPgGroupWriter } from './group-writer.js';
import { createReadGatherer } from './read-gatherer.js';
import { assertSchemaName, describeLocation } from './schema.js';

export interface PostgresStoreOptions {
  /** `postgres://user@host:5432/db`; a password in it is never shown in `location`. */
  url: string;
  /** Schema holding Airlock's tables (created when missing); default `public`. */
  schema?: string;
  /** Most pooled connections; default 10. */
  maxConnections?: number;
  /** How long opening a connection may take; default 3 s (so a start never hangs). */
  connectTimeoutMs?: number;
  /** Told of every transaction retried after a serialization failure or deadlock. */
  onRetry?: (error: unknown, attempt: number) => void;
}

/** A Store on PostgreSQL; `pool` and `schema` let a blob store share them. */
export interface PostgresStore extends Store {
  readonly pool: pg.Pool;
  readonly schema: string;
  /**
   * Keyed write groups committed so far and the writes in them (one commit
   * per group), and how often a group's writes met on a row and the group
   * ran again one write at a time (group-writer.ts).
   */
  readonly commits: {
    readonly groups: number;
    readonly writes: number;
    readonly conflicts: number;
  };
  /** Single-statement reads sent so far, and the gatherings they went in (read-gatherer.ts). */
  readonly gatheredReads: { readonly gatherings: number; readonly reads: number };
}

/**
 * The scale-out store: several Airlock instances may share one database.
 * Transactions are SERIALIZABLE, or READ COMMITTED with the rows they read
 * locked when the caller says its invariants are keyed (TransactionOptions);
 * either is re-run on a serialization failure or deadlock, so a transaction
 * function must be safe to run more than once. Keyed transactions of this
 * instance are group-committed (group-writer.ts): concurrent ones share one
 * transaction and one commit, and run at once on its connection. Reads are
 * REPEATABLE READ READ ONLY snapshots.
 *
 * @example
 * const store = await createPostgresStore({ url: 'postgres://airlock@db/airlock' });
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const schema = options.schema ?? 'public';
  assertSchemaName(schema);
  const pool = new pg.Pool({
    connectionString: options.url,
    // Statements a transaction issues at once go out without waiting for
    // each other's answers (pg-client.ts `pipelined`); one at a time, as
    // everywhere else, this changes nothing (issue 31).
    pipeline: true,
    // Every pooled connection resolves unqualified table names in `schema`.
    options: `-c search_path=${schema}`,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
  });
  // An idle connection that drops emits 'error' on the pool; without a
  // listener that would crash the process. The pool discards it and the next
  // query opens a fresh one (or fails with a proper error).
  pool.on('error', () => undefined);
  try {
    await migrate(pool, schema);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const notNested = createNestingGuard();
  const keyed = createPgGroupWriter(pool, options.onRetry);
  const gathered = createReadGatherer(pool);
  let closing: Promise<void> | undefined;
  const location = describeLocation(options.url, schema);

  const assertOpen = (): void => {
    if (closing) throw new Error(`The PostgreSQL store at ${location} is closed.`);
  };

  return {
    kind: 'postgres',
    location,
    pool,
    schema,
    commits: keyed.stats,
    gatheredReads: gathered.stats,

    transaction<T>(fn: (tx: StoreTx) => Promise<T>, txOptions?: TransactionOptions): Promise<T> {
      return notNested(async () => {
        assertOpen();
        if (txOptions?.isolation === 'keyed') return keyed.run(fn);
        return runTransaction(pool, WRITE, fn, options.onRetry);
      });
    },

    async read<T>(fn: (tx: StoreTx) => Promise<T>, readOptions?: ReadOptions): Promise<T> {
      assertOpen();
      if (!readOptions?.single) return runTransaction(pool, READ, fn, options.onRetry);
      try {
        return await gathered.read(fn);
      } catch (error) {
        // A serialization failure (a server whose default isolation is serializable) is run again.
        if (!isRetryable(error)) throw error;
        options.onRetry?.(error, 1);
        return runTransaction(pool, READ_ONE, fn, options.onRetry);
      }
    },

    close() {
      // Writes queued before close finish first.
      closing ??= keyed.drained().then(() => pool.end());
      return closing;
    },
  };
}
