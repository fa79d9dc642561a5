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
      const out: LoggedEventRow[] = [];
      for (const entry of entries) {
        const rows = await db.all<{ id: number | string }>(
          'INSERT INTO event_log (at, data) VALUES (?, ?) RETURNING id',
          [entry.at, toJson(entry.data)],
        );
        const row = rows[0];
        if (!row) throw new Error('event log insert returned no id');
        out.push({ id: Number(row.id), at: entry.at, data: entry.data });
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
