import type { GrantRepo } from '../../kernel/store.js';
import type { Grant, ResourceRef } from '../../kernel/records.js';
import { fromNullableJson, toNullableJson } from './json-column.js';
import type { SqlClient, SqlParam } from './sql-client.js';

interface GrantRow {
  id: string;
  connection: string;
  door: string;
  capability: string;
  resource: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

const COLUMNS = 'id, connection, door, capability, resource, created_at, expires_at, revoked_at';

function toGrant(row: GrantRow): Grant {
  return {
    id: row.id,
    connection: row.connection,
    door: row.door,
    capability: row.capability,
    resource: fromNullableJson<ResourceRef>(row.resource),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

export function createGrantRepo(db: SqlClient): GrantRepo {
  return {
    async insert(grant) {
      await db.run(`INSERT INTO grants (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
        grant.id,
        grant.connection,
        grant.door,
        grant.capability,
        toNullableJson(grant.resource),
        grant.createdAt,
        grant.expiresAt,
        grant.revokedAt,
      ]);
    },

    async get(id) {
      const rows = await db.all<GrantRow>(`SELECT ${COLUMNS} FROM grants WHERE id = ?`, [id]);
      return rows[0] ? toGrant(rows[0]) : null;
    },

    async listActive(now, connection) {
      // A grant expiring exactly at `now` is expired (expiresAt is exclusive).
      let where = 'revoked_at IS NULL AND expires_at > ?';
      const params: SqlParam[] = [now];
      if (connection !== undefined) {
        where += ' AND connection = ?';
        params.push(connection);
      }
      const rows = await db.all<GrantRow>(
        `SELECT ${COLUMNS} FROM grants WHERE ${where} ORDER BY created_at DESC, seq DESC`,
        params,
      );
      return rows.map(toGrant);
    },

    async revoke(id, at) {
      const changed = await db.run(
        'UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
        [at, id],
      );
      return changed > 0;
    },
  };
}
