import type { PoolClient } from 'pg';
import { createMutex } from '../sql/mutex.js';
import type { SqlClient } from '../sql/sql-client.js';

const numbered = new Map<string, string>();

/** `?` placeholders become `$1, $2, …` (the shared SQL has no other `?`). */
function toPg(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, text);
  }
  return text;
}

/**
 * A SqlClient over one pooled connection. Queries are queued here: a
 * transaction may issue several at once (`Promise.all`), and pg deprecates
 * overlapping queries on one client.
 */
export function createPgClient(client: PoolClient, lockingReads = false): SqlClient {
  const queue = createMutex();
  const query = (sql: string, params: readonly unknown[]) =>
    queue.run(() => client.query(toPg(sql), [...params]));
  return {
    dialect: 'postgres',
    lockingReads,
    async all<R extends object>(sql: string, params: readonly unknown[] = []) {
      return (await query(sql, params)).rows as R[];
    },
    async run(sql: string, params: readonly unknown[] = []) {
      return (await query(sql, params)).rowCount ?? 0;
    },
  };
}
