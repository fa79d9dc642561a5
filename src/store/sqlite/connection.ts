import Database from 'better-sqlite3';
import type { ChainHeadCache, SqlClient } from '../sql/sql-client.js';

export type SqliteDatabase = Database.Database;

/** The one read-write connection. */
export function openWriter(path: string, busyTimeoutMs: number): SqliteDatabase {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // WAL lets readers keep a snapshot while the writer works. NORMAL: a
    // commit does not fsync on the event loop; the store fsyncs the WAL file
    // itself, off the main thread (group-writer.ts), and answers a write only
    // after that, so an acknowledged write survives power loss or SIGKILL as
    // with FULL. Checkpoints still fsync the database file (NORMAL does).
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') {
      throw new Error(
        `SQLite at ${path} cannot use WAL mode (got ${String(mode)}); use a local disk.`,
      );
    }
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** A read-only connection; its transactions read one WAL snapshot. */
export function openReader(path: string, busyTimeoutMs: number): SqliteDatabase {
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * A SqlClient over one connection, caching prepared statements. Statements
 * run synchronously; the promise is only the interface's (no async frame).
 * `chainHead`: the writer's cache of the audit chain's newest link.
 */
export function createSqliteClient(db: SqliteDatabase, chainHead?: ChainHeadCache): SqlClient {
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  return {
    dialect: 'sqlite',
    ...(chainHead ? { chainHead } : {}),
    all<R extends object>(sql: string, params: readonly unknown[] = []) {
      try {
        return Promise.resolve(prepare(sql).all(...params) as R[]);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
    run(sql: string, params: readonly unknown[] = []) {
      try {
        return Promise.resolve(prepare(sql).run(...params).changes);
      } catch (error) {
        return Promise.reject(error as Error);
      }
    },
  };
}
