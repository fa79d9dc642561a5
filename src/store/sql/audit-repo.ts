import type { AuditRepo } from '../../kernel/store.js';
import type { AuditEntry, NewAuditEntry, Provenance } from '../../kernel/records.js';
import { fromNullableJson, toNullableJson } from './json-column.js';
import { limitClause, type SqlClient, type SqlParam } from './sql-client.js';

interface AuditRow {
  id: number | string;
  at: number;
  connection: string;
  door: string;
  tool: string;
  args_digest: string;
  provenance: string | null;
  result: string;
  duration_ms: number;
  decision: AuditEntry['decision'];
  rule: string | null;
}

const FIELDS =
  'at, connection, door, tool, args_digest, provenance, result, duration_ms, decision, rule';

function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    // PostgreSQL returns bigint as a string.
    id: Number(row.id),
    at: row.at,
    connection: row.connection,
    door: row.door,
    tool: row.tool,
    argsDigest: row.args_digest,
    provenance: fromNullableJson<Provenance>(row.provenance),
    result: row.result,
    durationMs: row.duration_ms,
    decision: row.decision ?? null,
    rule: row.rule ?? null,
  };
}

const ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
/** Most rows per INSERT of `appendMany` (10 parameters each). */
const CHUNK = 50;

const paramsOf = (entry: NewAuditEntry): SqlParam[] => [
  entry.at,
  entry.connection,
  entry.door,
  entry.tool,
  entry.argsDigest,
  toNullableJson(entry.provenance),
  entry.result,
  entry.durationMs,
  entry.decision,
  entry.rule,
];

/**
 * PostgreSQL hands out sequence values before commit, so concurrent
 * appenders could commit ids out of order and a reader polling with
 * `afterId` would skip one for good: appenders take turns (a transaction
 * lock) until they commit. SQLite already has a single writer.
 */
const TURN = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.audit'))";
/** One row's values typed for `INSERT … SELECT` (parameters there have no column to take a type from). */
const PG_ROW =
  '(?::double precision, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::double precision, ?::text, ?::text)';
/** One statement: the turn is taken (the CTE is scanned) before the row, and so its id, exists. */
const PG_APPEND = `WITH turn AS (${TURN}) INSERT INTO audit (${FIELDS}) SELECT v.* FROM turn, (VALUES ${PG_ROW}) AS v RETURNING id`;

export function createAuditRepo(db: SqlClient): AuditRepo {
  const takeTurn = async () => {
    if (db.dialect === 'postgres') await db.all(TURN);
  };
  return {
    async append(entry) {
      const rows = await db.all<{ id: number | string }>(
        db.dialect === 'postgres'
          ? PG_APPEND
          : `INSERT INTO audit (${FIELDS}) VALUES ${ROW} RETURNING id`,
        paramsOf(entry),
      );
      const row = rows[0];
      if (!row) throw new Error('audit insert returned no id');
      return { ...entry, id: Number(row.id) };
    },

    async appendMany(entries) {
      if (entries.length === 0) return [];
      await takeTurn();
      const appended: AuditEntry[] = [];
      for (let start = 0; start < entries.length; start += CHUNK) {
        const chunk = entries.slice(start, start + CHUNK);
        const rows = await db.all<{ id: number | string }>(
          `INSERT INTO audit (${FIELDS}) VALUES ${chunk.map(() => ROW).join(', ')} RETURNING id`,
          chunk.flatMap(paramsOf),
        );
        if (rows.length !== chunk.length) throw new Error('audit insert returned too few ids');
        // The rows of one VALUES list get increasing ids in list order;
        // RETURNING does not promise to give them back in that order.
        const ids = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
        chunk.forEach((entry, i) => appended.push({ ...entry, id: ids[i]! }));
      }
      return appended;
    },

    async list(query = {}) {
      let where = 'id > ?';
      const params: SqlParam[] = [query.afterId ?? 0];
      if (query.before !== undefined) {
        where += ' AND at < ?';
        params.push(query.before);
      }
      if (query.door !== undefined) {
        where += ' AND door = ?';
        params.push(query.door);
      }
      if (query.decision !== undefined) {
        where += ' AND decision = ?';
        params.push(query.decision);
      }
      if (query.rule !== undefined) {
        where += ' AND rule = ?';
        params.push(query.rule);
      }
      const page = limitClause(query.limit);
      const rows = await db.all<AuditRow>(
        `SELECT id, ${FIELDS} FROM audit WHERE ${where} ORDER BY id${query.order === 'desc' ? ' DESC' : ''}${page.sql}`,
        [...params, ...page.params],
      );
      return rows.map(toAuditEntry);
    },

    async deleteThrough(id) {
      return db.run('DELETE FROM audit WHERE id <= ?', [id]);
    },
  };
}
