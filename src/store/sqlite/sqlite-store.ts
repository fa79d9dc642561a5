import type { Store, StoreTx } from '../../kernel/store.js';
import { createNestingGuard } from '../sql/nesting-guard.js';
import type { SqlClient } from '../sql/sql-client.js';
import { assertNoFailure, createTxScope } from '../sql/tx-scope.js';
import { createSqliteClient, openReader, openWriter, type SqliteDatabase } from './connection.js';
import { migrate } from './migrations.js';
import { createMutex } from '../sql/mutex.js';
import { createReaderPool } from './reader-pool.js';

export interface SqliteStoreOptions {
  /** The database file (created when missing; its folder must exist). */
  path: string;
  /** How long a connection waits for another process's lock; default 5 s. */
  busyTimeoutMs?: number;
  /** Most read-only connections open at once; default 4. */
  readers?: number;
}

interface Connection {
  db: SqliteDatabase;
  client: SqlClient;
}

/**
 * The embedded store: one SQLite file in WAL mode. Writers take turns on
 * one connection (`BEGIN IMMEDIATE`); `read` runs on separate read-only
 * connections and sees only committed data.
 *
 * @example
 * const store = await createSqliteStore({ path: 'data/airlock.db' });
 * await store.transaction((tx) => tx.records.put('notes', 'a', { text: 'hi' }));
 */
export async function createSqliteStore(options: SqliteStoreOptions): Promise<Store> {
  const { path } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  const writerDb = openWriter(path, busyTimeoutMs);
  try {
    migrate(writerDb);
  } catch (error) {
    writerDb.close();
    throw error;
  }
  const writer: Connection = { db: writerDb, client: createSqliteClient(writerDb) };
  const readers = createReaderPool<Connection>(
    () => {
      const db = openReader(path, busyTimeoutMs);
      return { db, client: createSqliteClient(db) };
    },
    (reader) => reader.db.close(),
    options.readers ?? 4,
  );
  const writes = createMutex();
  const notNested = createNestingGuard();
  let closing: Promise<void> | undefined;

  const assertOpen = (): void => {
    if (closing) throw new Error(`The SQLite store at ${path} is closed.`);
  };

  return {
    kind: 'sqlite',
    location: path,

    transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
      return notNested(async () => {
        assertOpen();
        return writes.run(() => runTransaction(writer, 'BEGIN IMMEDIATE', fn, true));
      });
    },

    async read<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
      assertOpen();
      return readers.use((reader) => runTransaction(reader, 'BEGIN', fn, false));
    },

    close() {
      closing ??= (async () => {
        // Work queued before close finishes first.
        await writes.run(async () => undefined);
        await readers.close();
        writerDb.close();
      })();
      return closing;
    },
  };
}

async function runTransaction<T>(
  connection: Connection,
  begin: string,
  fn: (tx: StoreTx) => Promise<T>,
  refuseAfterFailure: boolean,
): Promise<T> {
  const { db } = connection;
  db.exec(begin);
  const scope = createTxScope(connection.client);
  try {
    let result: T;
    try {
      result = await fn(scope.tx);
    } finally {
      scope.end();
    }
    if (refuseAfterFailure) assertNoFailure(scope);
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
