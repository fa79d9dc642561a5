import type { ApprovalRepo } from '../../kernel/store.js';
import type { Approval, ResourceRef } from '../../kernel/records.js';
import { fromNullableJson, toNullableJson } from './json-column.js';
import type { SqlClient } from './sql-client.js';

interface ApprovalRow {
  id: string;
  connection: string;
  door: string;
  capability: string;
  summary: string;
  status: Approval['status'];
  lifetime_ms: number;
  created_at: number;
  decided_at: number | null;
  resource: string | null;
  grant_id: string | null;
}

const COLUMNS =
  'id, connection, door, capability, summary, status, lifetime_ms, created_at, decided_at, ' +
  'resource, grant_id';

function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    connection: row.connection,
    door: row.door,
    capability: row.capability,
    summary: row.summary,
    status: row.status,
    lifetimeMs: row.lifetime_ms,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    resource: fromNullableJson<ResourceRef>(row.resource),
    grantId: row.grant_id,
  };
}

export function createApprovalRepo(db: SqlClient): ApprovalRepo {
  return {
    async insert(approval) {
      await db.run(`INSERT INTO approvals (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        approval.id,
        approval.connection,
        approval.door,
        approval.capability,
        approval.summary,
        approval.status,
        approval.lifetimeMs,
        approval.createdAt,
        approval.decidedAt,
        toNullableJson(approval.resource),
        approval.grantId,
      ]);
    },

    async get(id) {
      const rows = await db.all<ApprovalRow>(`SELECT ${COLUMNS} FROM approvals WHERE id = ?`, [id]);
      return rows[0] ? toApproval(rows[0]) : null;
    },

    /** Oldest first: the inbox answers requests in the order they came. */
    async listPending() {
      const rows = await db.all<ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals WHERE status = 'pending' ORDER BY created_at, seq`,
      );
      return rows.map(toApproval);
    },

    async latest(connection, door, capability) {
      const rows = await db.all<ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals
         WHERE connection = ? AND door = ? AND capability = ?
         ORDER BY created_at DESC, seq DESC LIMIT 1`,
        [connection, door, capability],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },

    async decide(id, decision) {
      // The status condition makes the decision a compare-and-set.
      const rows = await db.all<ApprovalRow>(
        `UPDATE approvals SET status = ?, decided_at = ?, resource = ?, grant_id = ?
         WHERE id = ? AND status = 'pending'
         RETURNING ${COLUMNS}`,
        [
          decision.status,
          decision.decidedAt,
          toNullableJson(decision.resource),
          decision.grantId,
          id,
        ],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },
  };
}
