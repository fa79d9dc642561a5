import { closeSync, fdatasync, openSync } from 'node:fs';
import type { ReadOptions, Store, StoreTx } from '../../kernel/store.js';
import { createNestingGuard } from '../sql/nesting-guard.js';
import type { SqlClient } from '../sql/sql-client.js';
import { createTxScope } from '../sql/tx-scope.js';
import { createSqliteClient, openReader, openWriter, type SqliteDatabase } from './connection.js';
import { migrate } from './migrations.js';
import { createGroupWriter } from './group-writer.js';
import { createChangeMark, shmHeaderReader } from './change-mark.js';
import { createReaderPool } from './reader-pool.js';
import { createGrantsMark } from './grants-mark.js';
import { createSingleReadClient, type SingleReadStats } from './single-reads.js';

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
 * The embedded store: one SQLite file in WAL mode. Writes go to one
 * connection through a group-commit loop (group-writer.ts): concurrent
 * write transactions share one `BEGIN IMMEDIATE … COMMIT` and one fsync,
 * each in its own savepoint; `read` runs on separate read-only connections
 * and sees only committed data — a single-statement read on the writer
 * itself while no group is open there (single-reads.ts).
 *
 * @example
 * const store = await createSqliteStore({ path: 'data/airlock.db' });
 * await store.transaction((tx) => tx.records.put('notes', 'a', { text: 'hi' }));
 */
export interface SqliteStore extends Store {
  /** Write groups committed so far and the writes in them (one fsync per group). */
  readonly commits: { readonly groups: number; readonly writes: number };
  /** Where single-statement reads ran (single-reads.ts). */
  readonly singleReads: Readonly<SingleReadStats>;
}

export async function createSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const { path } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  const writerDb = openWriter(path, busyTimeoutMs);
  try {
    migrate(writerDb);
  } catch (error) {
    writerDb.close();
    throw error;
  }
  // The only audit writer on this file keeps the chain's newest link (group-writer.ts).
  const writer: Connection = {
    db: writerDb,
    client: createSqliteClient(writerDb, { head: null }),
  };
  const readers = createReaderPool<Connection>(
    () => {
      const db = openReader(path, busyTimeoutMs);
      return { db, client: createSqliteClient(db) };
    },
    (reader) => reader.db.close(),
    options.readers ?? 4,
  );
  // The WAL file, fsynced off the event loop after each group's COMMIT.
  const walFd = openSync(`${path}-wal`, 'a');
  const syncWal = () =>
    new Promise<void>((resolve, reject) =>
      fdatasync(walFd, (error) => (error ? reject(error) : resolve())),
    );
  const writes = createGroupWriter(writerDb, writer.client, syncWal);
  // Moves when another connection commits, never for this store's own commits (change-mark.ts).
  const dataVersion = writerDb.prepare('PRAGMA data_version').pluck();
  const mark = createChangeMark({
    dataVersion: () => dataVersion.get() as number,
    ...shmHeaderReader(path),
  });
  const singleReads: SingleReadStats = { onWriter: 0, onReaders: 0 };
  const singleInFlight = new Set<Promise<unknown>>();
  const single: Connection = {
    db: writerDb,
    client: createSingleReadClient(writerDb, writer.client, readers, singleReads),
  };
  const notNested = createNestingGuard();
  let closing: Promise<void> | undefined;
  const grants = createGrantsMark(() => (closing ? null : mark.read()));

  const assertOpen = (): void => {
    if (closing) throw new Error(`The SQLite store at ${path} is closed.`);
  };

  return {
    kind: 'sqlite',
    location: path,
    commits: writes.stats,
    singleReads,

    transaction<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
      return notNested(async () => {
        assertOpen();
        const watch = grants.watch();
        try {
          return await writes.run(fn, watch.touch);
        } finally {
          watch.end();
        }
      });
    },

    async read<T>(fn: (tx: StoreTx) => Promise<T>, readOptions?: ReadOptions): Promise<T> {
      assertOpen();
      let result: T;
      if (readOptions?.single === true) {
        // Tracked: close waits for it before closing the writer it may read on.
        const running = runRead(single, fn, true);
        singleInFlight.add(running);
        try {
          result = await running;
        } finally {
          singleInFlight.delete(running);
        }
      } else result = await readers.use((reader) => runRead(reader, fn, false));
      // Nothing is shown before it is on disk (a commit whose fsync is under way).
      await writes.durableNow();
      return result;
    },

    changeMark: () => (closing ? null : mark.read()),
    grantsMark: () => grants.read(),

    close() {
      closing ??= (async () => {
        // Work queued before close finishes first.
        await writes.drained();
        await Promise.allSettled([...singleInFlight]);
        await readers.close();
        writerDb.close();
        closeSync(walFd);
        mark.close();
      })();
      return closing;
    },
  };
}

/**
 * A read-only transaction on a reader connection. A single-statement read
 * (ReadOptions.single) runs without BEGIN and COMMIT, on the client of
 * single-reads.ts: SQLite runs a lone statement in a read transaction of
 * its own, one snapshot, as PostgreSQL does (issue 31: two `exec` parses
 * per read of a journaled call).
 */
async function runRead<T>(
  connection: Connection,
  fn: (tx: StoreTx) => Promise<T>,
  single: boolean,
): Promise<T> {
  const { db } = connection;
  if (single) {
    const scope = createTxScope(connection.client, true);
    try {
      return await fn(scope.tx);
    } finally {
      scope.end();
    }
  }
  db.exec('BEGIN');
  const scope = createTxScope(connection.client, single);
  try {
    let result: T;
    try {
      result = await fn(scope.tx);
    } finally {
      scope.end();
    }
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
