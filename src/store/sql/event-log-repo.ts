import type { EventLogRepo, LoggedEventRow } from '../../kernel/store.js';
import { fromJson, toJson } from './json-column.js';
import type { SqlClient } from './sql-client.js';

interface EventRow {
  id: number | string;
  at: number;
  data: string;
}

// PostgreSQL returns bigint as a string.
const toEntry = (row: EventRow): LoggedEventRow => ({
  id: Number(row.id),
  at: row.at,
  data: fromJson<LoggedEventRow['data']>(row.data),
});

/** Rows per INSERT statement. */
const CHUNK = 100;

export function createEventLogRepo(db: SqlClient): EventLogRepo {
  return {
    async append(entries) {
      if (entries.length === 0) return [];
      if (db.dialect === 'postgres') {
        // Identity values are handed out before commit; appenders take turns
        // until they commit, so ids become visible in id order and a reader
        // that saw N never later finds a smaller id committed (as audit does).
        await db.all("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.event_log'))");
      }
      // One multi-row INSERT per chunk: ids are handed out in VALUES order.
      const out: LoggedEventRow[] = [];
      for (let start = 0; start < entries.length; start += CHUNK) {
        const chunk = entries.slice(start, start + CHUNK);
        const rows = await db.all<{ id: number | string }>(
          `INSERT INTO event_log (at, data) VALUES ${chunk.map(() => '(?, ?)').join(', ')} RETURNING id`,
          chunk.flatMap((entry) => [entry.at, toJson(entry.data)]),
        );
        if (rows.length !== chunk.length) throw new Error('event log insert returned no id');
        const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
        chunk.forEach((entry, i) => out.push({ id: ids[i]!, at: entry.at, data: entry.data }));
      }
      return out;
    },

    async after(afterId, limit) {
      const rows = await db.all<EventRow>(
        'SELECT id, at, data FROM event_log WHERE id > ? ORDER BY id LIMIT ?',
        [afterId, Math.max(0, Math.floor(limit))],
      );
      return rows.map(toEntry);
    },

    async bounds() {
      const rows = await db.all<{ first: number | string | null; last: number | string | null }>(
        'SELECT MIN(id) AS first, MAX(id) AS last FROM event_log',
      );
      const row = rows[0];
      return {
        first: row?.first == null ? null : Number(row.first),
        last: row?.last == null ? 0 : Number(row.last),
      };
    },

    async prune(throughId) {
      return db.run('DELETE FROM event_log WHERE id <= ?', [throughId]);
    },
  };
}
