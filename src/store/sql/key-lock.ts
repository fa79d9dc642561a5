import type { SqlClient } from './sql-client.js';

/**
 * In a keyed PostgreSQL transaction, holds a lock on a key until the
 * transaction ends, whether or not a row with that key exists yet: two
 * transactions that both find a key absent and mean to create it then take
 * turns, and the second sees the first's row. (A row lock cannot do this:
 * there is no row to lock.) A no-op elsewhere.
 */
export async function lockKey(db: SqlClient, table: string, ...key: string[]): Promise<void> {
  if (!db.lockingReads) return;
  await db.all('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
    JSON.stringify([table, ...key]),
  ]);
}

/** ` FOR UPDATE` when reads lock (a keyed PostgreSQL transaction), else nothing. */
export const forUpdate = (db: SqlClient): string => (db.lockingReads ? ' FOR UPDATE' : '');

/**
 * Reads a row by key; in a keyed transaction the row stays locked, and when
 * it is absent its key does (see `lockKey`), then the read is repeated:
 * under READ COMMITTED each statement sees what committed before it began.
 */
export async function readByKey<R>(
  db: SqlClient,
  read: () => Promise<R[]>,
  table: string,
  ...key: string[]
): Promise<R[]> {
  const rows = await read();
  if (rows.length > 0 || !db.lockingReads) return rows;
  await lockKey(db, table, ...key);
  return read();
}
