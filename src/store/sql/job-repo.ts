import type { JobRepo } from '../../kernel/store.js';
import type { Job, JobProgress, JobWarning } from '../../kernel/records.js';
import { fromJson, toJson } from './json-column.js';
import { limitClause, placeholders, type SqlClient, type SqlParam } from './sql-client.js';

interface JobRow {
  id: string;
  door: string;
  kind: string;
  status: Job['status'];
  progress: string;
  warnings: string;
  error: string | null;
  input: string;
  agent: string | null;
  created_at: number;
  updated_at: number;
}

const COLUMNS =
  'id, door, kind, status, progress, warnings, error, input, agent, created_at, updated_at';

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    door: row.door,
    kind: row.kind,
    status: row.status,
    progress: fromJson<JobProgress>(row.progress),
    warnings: fromJson<JobWarning[]>(row.warnings),
    error: row.error,
    input: fromJson(row.input),
    agent: row.agent,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function createJobRepo(db: SqlClient): JobRepo {
  /** Saves a job still queued or running, when `also` (a condition and its value) holds too. */
  const saveUnfinished = async (job: Job, also: [string, SqlParam] | null): Promise<boolean> => {
    const changed = await db.run(
      `UPDATE jobs SET status = ?, progress = ?, warnings = ?, error = ?, updated_at = ?
       WHERE id = ? AND status IN ('queued', 'running')${also ? ` AND ${also[0]}` : ''}`,
      [
        job.status,
        toJson(job.progress),
        toJson(job.warnings),
        job.error,
        job.updatedAt,
        job.id,
        ...(also ? [also[1]] : []),
      ],
    );
    return changed > 0;
  };
  return {
    async put(job) {
      // An upsert (not delete + insert) keeps the row's insertion order.
      await db.run(
        `INSERT INTO jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET
           door = excluded.door, kind = excluded.kind, status = excluded.status,
           progress = excluded.progress, warnings = excluded.warnings, error = excluded.error,
           input = excluded.input, agent = excluded.agent, created_at = excluded.created_at,
           updated_at = excluded.updated_at`,
        [
          job.id,
          job.door,
          job.kind,
          job.status,
          toJson(job.progress),
          toJson(job.warnings),
          job.error,
          toJson(job.input),
          job.agent,
          job.createdAt,
          job.updatedAt,
        ],
      );
    },

    async updateUnfinished(job, savedAt) {
      return saveUnfinished(job, savedAt === undefined ? null : ['updated_at = ?', savedAt]);
    },

    async takeOver(job, staleBefore) {
      return saveUnfinished(job, ['updated_at < ?', staleBefore]);
    },

    async get(id) {
      const rows = await db.all<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = ?`, [id]);
      return rows[0] ? toJob(rows[0]) : null;
    },

    async list(query = {}) {
      const conditions: string[] = [];
      const params: SqlParam[] = [];
      if (query.door !== undefined) {
        conditions.push('door = ?');
        params.push(query.door);
      }
      if (query.agent !== undefined) {
        conditions.push('agent = ?');
        params.push(query.agent);
      }
      if (query.status !== undefined) {
        // An empty status list matches no job.
        if (query.status.length === 0) return [];
        conditions.push(`status IN (${placeholders(query.status.length)})`);
        params.push(...query.status);
      }
      const where = conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')}` : '';
      const page = limitClause(query.limit);
      const rows = await db.all<JobRow>(
        `SELECT ${COLUMNS} FROM jobs${where} ORDER BY created_at DESC, seq DESC${page.sql}`,
        [...params, ...page.params],
      );
      return rows.map(toJob);
    },

    async interruptUnfinished(now, staleBefore) {
      const stale = staleBefore === undefined ? '' : ' AND updated_at < ?';
      const rows = await db.all<JobRow & { seq: number | string }>(
        `UPDATE jobs SET status = 'failed', error = 'interrupted', updated_at = ?
         WHERE status IN ('queued', 'running')${stale}
         RETURNING ${COLUMNS}, seq`,
        staleBefore === undefined ? [now] : [now, staleBefore],
      );
      // RETURNING has no order; report oldest first.
      rows.sort((a, b) => a.created_at - b.created_at || Number(a.seq) - Number(b.seq));
      return rows.map(toJob);
    },
  };
}
