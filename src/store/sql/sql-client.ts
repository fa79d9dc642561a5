import type { AuditEntry, NewAuditEntry } from '../../kernel/records.js';

/**
 * The few operations the shared repositories need from a database
 * connection. Both dialects accept the same SQL here: `?` placeholders
 * (the PostgreSQL client numbers them), `ON CONFLICT`, `RETURNING`.
 */
export type SqlParam = string | number | null;

export interface SqlClient {
  /** Rows of a query (or of a statement with `RETURNING`). */
  all<R extends object>(sql: string, params?: readonly SqlParam[]): Promise<R[]>;
  /** Runs a statement; returns how many rows it changed. */
  run(sql: string, params?: readonly SqlParam[]): Promise<number>;
  /** `sqlite` or `postgres`, for the rare statement only one dialect needs. */
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * True in a keyed write transaction on PostgreSQL (READ COMMITTED): reads
   * by key lock what they read (or the absent key) until the transaction
   * ends, which is what keeps read-modify-write correct there.
   */
  readonly lockingReads?: boolean;
  /**
   * The audit chain's newest link as this connection last wrote it, when
   * the connection is the only audit writer (SQLite's writer): appends
   * follow it without reading the table. The writer clears it (`null`)
   * whenever a savepoint or transaction rolls back.
   */
  readonly chainHead?: ChainHeadCache;
  /**
   * PostgreSQL group commit: audit entries are collected here and inserted
   * by the group's last statement, right before its COMMIT (group-writer.ts).
   */
  readonly deferAudit?: (entry: NewAuditEntry) => AuditEntry;
  /**
   * PostgreSQL concurrent write group (postgres/concurrent-group.ts): queues
   * a statement whose answer the caller does not need — sent with the
   * group's COMMIT, or earlier, before any statement that could see the row
   * it writes. True when queued; false when the caller must run it now. A
   * queued statement that fails fails its group, which runs again one write
   * at a time, where nothing is queued.
   */
  readonly runLater?: (sql: string, params: readonly SqlParam[]) => boolean;
  /**
   * Called when a write transaction first uses `tx.grants` (store-tx.ts):
   * the SQLite store's grants mark moves (sqlite/grants-mark.ts).
   */
  readonly touchingGrants?: () => void;
}

/** See `SqlClient.chainHead`: the id and hash the next audit entry follows. */
export interface ChainHeadCache {
  head: { id: number; hash: string } | null;
}

/** `LIMIT ?` and its parameter, or nothing when no limit is given. */
export function limitClause(limit: number | undefined): { sql: string; params: SqlParam[] } {
  if (limit === undefined) return { sql: '', params: [] };
  if (!Number.isFinite(limit)) return { sql: '', params: [] };
  return { sql: ' LIMIT ?', params: [Math.max(0, Math.floor(limit))] };
}

/** `?, ?, ?` for an `IN (...)` list of `count` values. */
export function placeholders(count: number): string {
  return new Array<string>(count).fill('?').join(', ');
}
