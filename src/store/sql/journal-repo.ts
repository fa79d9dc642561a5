import type { JournalRepo } from '../../kernel/store.js';
import type { JournalEntry, Provenance } from '../../kernel/records.js';
import { fromNullableJson, toNullableJson } from './json-column.js';
import { forUpdate } from './key-lock.js';
import { limitClause, type SqlClient, type SqlParam } from './sql-client.js';

interface JournalRow {
  scope: string;
  operation_id: string;
  digest: string;
  state: JournalEntry['state'];
  tool: string;
  connection: string;
  target: string | null;
  receipt: string | null;
  provenance: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

const COLUMNS =
  'scope, operation_id, digest, state, tool, connection, target, receipt, provenance, ' +
  'created_at, updated_at, expires_at';
const INSERT_NEW = `INSERT INTO journal (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function toEntry(row: JournalRow): JournalEntry {
  return {
    scope: row.scope,
    operationId: row.operation_id,
    digest: row.digest,
    state: row.state,
    tool: row.tool,
    connection: row.connection,
    target: row.target,
    receipt: fromNullableJson(row.receipt),
    provenance: fromNullableJson<Provenance>(row.provenance),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
  };
}

export function createJournalRepo(db: SqlClient): JournalRepo {
  const get = async (scope: string, operationId: string): Promise<JournalEntry | null> => {
    const rows = await db.all<JournalRow>(
      `SELECT ${COLUMNS} FROM journal WHERE scope = ? AND operation_id = ?${forUpdate(db)}`,
      [scope, operationId],
    );
    return rows[0] ? toEntry(rows[0]) : null;
  };

  return {
    get,

    async insert(entry) {
      const params = [
        entry.scope,
        entry.operationId,
        entry.digest,
        entry.state,
        entry.tool,
        entry.connection,
        entry.target,
        toNullableJson(entry.receipt),
        toNullableJson(entry.provenance),
        entry.createdAt,
        entry.updatedAt,
        entry.expiresAt,
      ];
      // In a PostgreSQL write group it goes with the COMMIT, without ON
      // CONFLICT: an entry already there fails the group, which runs again
      // one write at a time and takes the path below.
      if (db.runLater?.(INSERT_NEW, params)) return null;
      // ON CONFLICT DO NOTHING never fails on a duplicate; the loser of a
      // race then reads the winner's entry (on PostgreSQL after a retry).
      const inserted = await db.run(
        `${INSERT_NEW} ON CONFLICT (scope, operation_id) DO NOTHING`,
        params,
      );
      if (inserted > 0) return null;
      const existing = await get(entry.scope, entry.operationId);
      if (!existing) {
        throw new Error(
          `journal entry ${entry.scope}/${entry.operationId} conflicted but cannot be read`,
        );
      }
      return existing;
    },

    async update(scope, operationId, patch) {
      let set = 'state = ?, updated_at = ?';
      const params: SqlParam[] = [patch.state, patch.updatedAt];
      if (patch.receipt !== undefined) {
        set += ', receipt = ?';
        params.push(toNullableJson(patch.receipt));
      }
      const changed = await db.run(
        `UPDATE journal SET ${set} WHERE scope = ? AND operation_id = ?`,
        [...params, scope, operationId],
      );
      return changed > 0;
    },

    async delete(scope, operationId) {
      const changed = await db.run('DELETE FROM journal WHERE scope = ? AND operation_id = ?', [
        scope,
        operationId,
      ]);
      return changed > 0;
    },

    async listByState(state, limit) {
      const page = limitClause(limit);
      const rows = await db.all<JournalRow>(
        `SELECT ${COLUMNS} FROM journal WHERE state = ? ORDER BY created_at, seq${page.sql}`,
        [state, ...page.params],
      );
      return rows.map(toEntry);
    },

    async purgeExpired(now) {
      return db.run('DELETE FROM journal WHERE expires_at < ?', [now]);
    },
  };
}
