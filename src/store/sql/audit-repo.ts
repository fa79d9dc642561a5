import type { AuditRepo } from '../../kernel/store.js';
import type { AuditEntry, NewAuditEntry, Provenance } from '../../kernel/records.js';
import {
  ANCHOR_KEY,
  CHAIN_COLLECTION,
  contentDigest,
  GENESIS,
  linkHash,
} from '../../kernel/audit/audit-chain.js';
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
  prev_hash: string | null;
  hash: string | null;
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
    prevHash: row.prev_hash ?? null,
    hash: row.hash ?? null,
  };
}

/** Most rows per INSERT of `appendMany` (13 parameters each). */
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
 * The hash chain (kernel/audit/audit-chain.ts) is linked inside the appenders'
 * turn. SQLite (one writer, in process): the appender reads the newest
 * entry and the next id, and inserts each entry with its id and hashes.
 * PostgreSQL: the appender passes the content digest as `hash` and a
 * trigger (migration 8) links the row, so an append is still one statement.
 */
const SQLITE_ROW = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const SQLITE_HEAD = `SELECT
  (SELECT seq FROM sqlite_sequence WHERE name = 'audit') AS seq,
  (SELECT id FROM audit ORDER BY id DESC LIMIT 1) AS id,
  (SELECT hash FROM audit ORDER BY id DESC LIMIT 1) AS hash,
  (SELECT value FROM records WHERE collection = '${CHAIN_COLLECTION}' AND key = '${ANCHOR_KEY}') AS anchor`;
const LINKED = `${FIELDS}, prev_hash, hash`;

/**
 * PostgreSQL hands out sequence values before commit, so concurrent
 * appenders could commit ids out of order and a reader polling with
 * `afterId` would skip one for good: appenders take turns (a transaction
 * lock) until they commit. Keyed write groups take it last, in the message
 * that commits (`auditInsertAndCommit`), so it is held only for the commit.
 * SQLite already has a single writer.
 */
const TURN = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.audit'))";
/** One row's values typed for `INSERT … SELECT` (parameters there have no column to take a type from). */
const PG_ROW =
  '(?::double precision, ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::double precision, ?::text, ?::text, ?::text)';
const PG_VALUES = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
/** One statement: the turn is taken (the CTE is scanned) before the row, and so its id, exists. */
const PG_APPEND = `WITH turn AS (${TURN}) INSERT INTO audit (${FIELDS}, hash) SELECT v.* FROM turn, (VALUES ${PG_ROW}) AS v RETURNING id, prev_hash, hash`;

interface LinkedRow {
  id: number | string;
  prev_hash: string;
  hash: string;
}
const linked = (entry: NewAuditEntry, row: LinkedRow): AuditEntry => ({
  ...entry,
  id: Number(row.id),
  prevHash: row.prev_hash,
  hash: row.hash,
});

/** The client calls `auditInsertAndCommit` needs (pg's PoolClient has them). */
interface LiteralClient {
  query(sql: string): Promise<unknown>;
  escapeLiteral(value: string): string;
}

/** A parameter as an SQL literal (numbers are finite; strings escaped by the driver). */
const literal = (client: LiteralClient, value: SqlParam): string =>
  value === null ? 'NULL' : typeof value === 'number' ? String(value) : client.escapeLiteral(value);

/**
 * PostgreSQL group commit (postgres/group-writer.ts): the group's deferred
 * audit entries are inserted and the transaction committed in one
 * simple-query message, so the ordering turn the INSERT takes is held only
 * inside the server, until that COMMIT ends. Each entry is given its id and
 * hashes (rows in list order get increasing ids and are linked in order).
 */
export async function auditInsertAndCommit(
  client: LiteralClient,
  entries: AuditEntry[],
): Promise<void> {
  const values = entries
    .map(
      (e, i) =>
        `(${[...paramsOf(e), contentDigest(e)].map((v) => literal(client, v)).join(', ')}, ${i})`,
    )
    .join(', ');
  const results = (await client.query(
    `WITH turn AS (${TURN}) INSERT INTO audit (${FIELDS}, hash) SELECT ${VALUE_COLUMNS} FROM turn, (VALUES ${values}) AS v(${FIELDS}, hash, ord) ORDER BY v.ord RETURNING id, prev_hash, hash; COMMIT`,
  )) as { rows: LinkedRow[] }[];
  const rows = results[0]?.rows ?? [];
  if (rows.length !== entries.length) throw new Error('audit insert returned too few ids');
  rows.sort((a, b) => Number(a.id) - Number(b.id));
  entries.forEach((entry, i) => {
    const row = rows[i]!;
    entry.id = Number(row.id);
    entry.prevHash = row.prev_hash;
    entry.hash = row.hash;
  });
}
const VALUE_COLUMNS = `${FIELDS}, hash`
  .split(', ')
  .map((column) => `v.${column}`)
  .join(', ');

export function createAuditRepo(db: SqlClient): AuditRepo {
  /** SQLite: the entries with their ids and links, following the newest entry (or the anchor). */
  const linkSqlite = async (entries: readonly NewAuditEntry[]): Promise<AuditEntry[]> => {
    const cache = db.chainHead;
    const start = cache?.head ?? (await readHead());
    let { id, hash: prevHash } = start;
    const linkedEntries = entries.map((entry) => {
      id += 1;
      const hash = linkHash(prevHash, id, contentDigest(entry));
      const out = { ...entry, id, prevHash, hash };
      prevHash = hash;
      return out;
    });
    // The writer clears the cache if this transaction (or its savepoint) rolls back.
    if (cache) cache.head = { id, hash: prevHash };
    return linkedEntries;
  };
  const readHead = async (): Promise<{ id: number; hash: string }> => {
    const [head] = await db.all<{
      seq: number | null;
      id: number | null;
      hash: string | null;
      anchor: string | null;
    }>(SQLITE_HEAD);
    // AUTOINCREMENT: the next id is above every id ever used, even deleted ones.
    const id = Math.max(head?.seq ?? 0, head?.id ?? 0);
    const hash =
      head?.id != null
        ? (head.hash ?? GENESIS)
        : head?.anchor
          ? fromNullableJson<{ hash: string }>(head.anchor)!.hash
          : GENESIS;
    return { id, hash };
  };
  const insertSqlite = async (entries: readonly AuditEntry[]) => {
    if (entries.length === 1) {
      const e = entries[0]!;
      await db.run(`INSERT INTO audit (id, ${LINKED}) VALUES ${SQLITE_ROW}`, [
        e.id,
        ...paramsOf(e),
        e.prevHash,
        e.hash,
      ]);
      return;
    }
    for (let start = 0; start < entries.length; start += CHUNK) {
      const chunk = entries.slice(start, start + CHUNK);
      await db.run(
        `INSERT INTO audit (id, ${LINKED}) VALUES ${chunk.map(() => SQLITE_ROW).join(', ')}`,
        chunk.flatMap((e) => [e.id, ...paramsOf(e), e.prevHash, e.hash]),
      );
    }
  };
  return {
    async append(entry) {
      if (db.deferAudit) return db.deferAudit(entry);
      if (db.dialect === 'postgres') {
        const rows = await db.all<LinkedRow>(PG_APPEND, [...paramsOf(entry), contentDigest(entry)]);
        const row = rows[0];
        if (!row) throw new Error('audit insert returned no id');
        return linked(entry, row);
      }
      const [appended] = await linkSqlite([entry]);
      await insertSqlite([appended!]);
      return appended!;
    },

    async appendMany(entries) {
      if (entries.length === 0) return [];
      if (db.deferAudit) return entries.map(db.deferAudit);
      if (db.dialect !== 'postgres') {
        const appended = await linkSqlite(entries);
        await insertSqlite(appended);
        return appended;
      }
      await db.all(TURN);
      const appended: AuditEntry[] = [];
      for (let start = 0; start < entries.length; start += CHUNK) {
        const chunk = entries.slice(start, start + CHUNK);
        const rows = await db.all<LinkedRow>(
          `INSERT INTO audit (${FIELDS}, hash) VALUES ${chunk.map(() => PG_VALUES).join(', ')} RETURNING id, prev_hash, hash`,
          chunk.flatMap((e) => [...paramsOf(e), contentDigest(e)]),
        );
        if (rows.length !== chunk.length) throw new Error('audit insert returned too few ids');
        // The rows of one VALUES list get increasing ids in list order (and
        // are linked in that order); RETURNING does not promise that order.
        rows.sort((a, b) => Number(a.id) - Number(b.id));
        chunk.forEach((entry, i) => appended.push(linked(entry, rows[i]!)));
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
        `SELECT id, ${LINKED} FROM audit WHERE ${where} ORDER BY id${query.order === 'desc' ? ' DESC' : ''}${page.sql}`,
        [...params, ...page.params],
      );
      return rows.map(toAuditEntry);
    },

    async deleteThrough(id) {
      // Pruning moves the anchor: the next append reads the head afresh.
      if (db.chainHead) db.chainHead.head = null;
      return db.run('DELETE FROM audit WHERE id <= ?', [id]);
    },
  };
}
