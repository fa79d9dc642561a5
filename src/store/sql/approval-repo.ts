import { lockKey } from './key-lock.js';
import type { ApprovalRepo } from '../../kernel/store.js';
import type { Approval, ResourceRef } from '../../kernel/records.js';
import { fromNullableJson, toNullableJson } from './json-column.js';
import { forUpdate } from './key-lock.js';
import type { SqlClient } from './sql-client.js';

interface ApprovalRow {
  id: string;
  kind: Approval['kind'];
  connection: string;
  agent: string | null;
  door: string;
  capability: string;
  tool: string | null;
  digest: string | null;
  target: string | null;
  rule: string | null;
  preview: string | null;
  scope: Approval['scope'];
  reason: string | null;
  used_at: number | null;
  summary: string;
  status: Approval['status'];
  lifetime_ms: number;
  created_at: number;
  decided_at: number | null;
  resource: string | null;
  grant_id: string | null;
  orphaned_at: number | null;
}

const FIELDS = [
  'id',
  'kind',
  'connection',
  'agent',
  'door',
  'capability',
  'tool',
  'digest',
  'target',
  'rule',
  'preview',
  'scope',
  'reason',
  'used_at',
  'summary',
  'status',
  'lifetime_ms',
  'created_at',
  'decided_at',
  'resource',
  'grant_id',
  'orphaned_at',
] as const;
const COLUMNS = FIELDS.join(', ');
const PLACEHOLDERS = FIELDS.map(() => '?').join(', ');

function toApproval(row: ApprovalRow): Approval {
  return {
    id: row.id,
    kind: row.kind,
    connection: row.connection,
    agent: row.agent,
    door: row.door,
    capability: row.capability,
    tool: row.tool,
    digest: row.digest,
    target: row.target,
    rule: row.rule,
    preview: fromNullableJson<unknown>(row.preview),
    scope: row.scope,
    reason: row.reason,
    usedAt: row.used_at,
    summary: row.summary,
    status: row.status,
    lifetimeMs: row.lifetime_ms,
    createdAt: row.created_at,
    decidedAt: row.decided_at,
    resource: fromNullableJson<ResourceRef>(row.resource),
    grantId: row.grant_id,
    ...(row.orphaned_at === null ? {} : { orphanedAt: Number(row.orphaned_at) }),
  };
}

export function createApprovalRepo(db: SqlClient): ApprovalRepo {
  return {
    async insert(a) {
      await db.run(`INSERT INTO approvals (${COLUMNS}) VALUES (${PLACEHOLDERS})`, [
        a.id,
        a.kind,
        a.connection,
        a.agent,
        a.door,
        a.capability,
        a.tool,
        a.digest,
        a.target,
        a.rule,
        toNullableJson(a.preview ?? null),
        a.scope,
        a.reason,
        a.usedAt,
        a.summary,
        a.status,
        a.lifetimeMs,
        a.createdAt,
        a.decidedAt,
        toNullableJson(a.resource),
        a.grantId,
        a.orphanedAt ?? null,
      ]);
    },

    async get(id) {
      const rows = await db.all<ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals WHERE id = ?${forUpdate(db)}`,
        [id],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },

    /** Oldest first: the inbox answers requests in the order they came. */
    async listPending() {
      const rows = await db.all<ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals WHERE status = 'pending' ORDER BY created_at, seq`,
      );
      return rows.map(toApproval);
    },

    async listPendingOf(agent) {
      // In a keyed transaction the agent's pending list is held until commit:
      // its requests take turns, so a count of them stays exact.
      await lockKey(db, 'approvals.pending', agent ?? '');
      const rows = await db.all<ApprovalRow>(
        agent === null
          ? `SELECT ${COLUMNS} FROM approvals WHERE agent IS NULL AND status = 'pending' ORDER BY created_at, seq`
          : `SELECT ${COLUMNS} FROM approvals WHERE agent = ? AND status = 'pending' ORDER BY created_at, seq`,
        agent === null ? [] : [agent],
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

    async latestCall(agent, door, tool, digest) {
      const rows = await db.all<ApprovalRow>(
        `SELECT ${COLUMNS} FROM approvals
         WHERE agent = ? AND door = ? AND tool = ? AND digest = ? AND kind = 'policy'
         ORDER BY created_at DESC, seq DESC LIMIT 1`,
        [agent, door, tool, digest],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },

    async decide(id, decision) {
      // The status condition makes the decision a compare-and-set.
      const rows = await db.all<ApprovalRow>(
        `UPDATE approvals SET status = ?, decided_at = ?, resource = ?, grant_id = ?,
           scope = COALESCE(?, scope), reason = COALESCE(?, reason)
         WHERE id = ? AND status = 'pending'
         RETURNING ${COLUMNS}`,
        [
          decision.status,
          decision.decidedAt,
          toNullableJson(decision.resource),
          decision.grantId,
          decision.scope ?? null,
          decision.reason ?? null,
          id,
        ],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },

    async orphan(id, at) {
      const rows = await db.all<ApprovalRow>(
        `UPDATE approvals SET orphaned_at = ?
         WHERE id = ? AND status = 'pending' AND orphaned_at IS NULL
         RETURNING ${COLUMNS}`,
        [at, id],
      );
      return rows[0] ? toApproval(rows[0]) : null;
    },

    async markUsed(id, at) {
      const rows = await db.all<{ id: string }>(
        `UPDATE approvals SET used_at = ?
         WHERE id = ? AND status = 'approved' AND used_at IS NULL
         RETURNING id`,
        [at, id],
      );
      return rows.length === 1;
    },
  };
}
