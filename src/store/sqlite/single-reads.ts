/**
 * Where a single-statement read runs (issue 31): on the writer connection
 * while it has no transaction open, else on a reader.
 *
 * SQLite drops a connection's whole page cache when it starts a read
 * transaction and finds that another connection committed since its last
 * one (WAL mode: the WAL-index header changed). Every group commit does
 * that to every reader, so a reader's next read fetches the B-tree pages
 * it walks again, from the WAL file with `pread` — about three system calls
 * per journaled write, measured with `strace -c` (21,802 `pread64` for
 * 7,026 writes; 4,695 with reads routed here). The writer's cache survives
 * its own commits.
 *
 * A lone statement is its own snapshot on either connection (SQLite runs it
 * in a read transaction of its own). The choice is made per statement, at
 * the moment it runs, with nothing awaited in between: better-sqlite3 runs
 * it synchronously, so no write group can begin between the check and the
 * read. While a group is open on the writer (`BEGIN IMMEDIATE` … `COMMIT`,
 * awaiting its writes' doors), its uncommitted rows are only on the writer:
 * the statement goes to a reader. A statement that would write goes to a
 * reader too, whose read-only connection refuses it as before.
 */
import type { SqliteDatabase } from './connection.js';
import type { SqlClient, SqlParam } from '../sql/sql-client.js';
import type { ReaderPool } from './reader-pool.js';

export interface SingleReadStats {
  /** Statements run on the idle writer. */
  onWriter: number;
  /** Statements run on a reader (the writer was in a transaction, or the statement writes). */
  onReaders: number;
}

export function createSingleReadClient(
  writerDb: SqliteDatabase,
  writer: SqlClient,
  readers: ReaderPool<{ client: SqlClient }>,
  stats: SingleReadStats,
): SqlClient {
  // Whether each statement only reads, as SQLite compiled it on the writer.
  const readOnly = new Map<string, boolean>();
  const onWriter = (sql: string): boolean => {
    if (writerDb.inTransaction) return false;
    let only = readOnly.get(sql);
    if (only === undefined) {
      try {
        only = writerDb.prepare(sql).readonly;
      } catch {
        return false; // not a statement SQLite accepts: the reader answers with its error
      }
      readOnly.set(sql, only);
    }
    return only;
  };
  return {
    dialect: 'sqlite',
    all<R extends object>(sql: string, params: readonly SqlParam[] = []) {
      if (onWriter(sql)) {
        stats.onWriter += 1;
        return writer.all<R>(sql, params);
      }
      stats.onReaders += 1;
      return readers.use((reader) => reader.client.all<R>(sql, params));
    },
    run(sql: string, params: readonly SqlParam[] = []) {
      stats.onReaders += 1;
      return readers.use((reader) => reader.client.run(sql, params));
    },
  };
}
