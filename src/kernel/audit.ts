/**
 * The audit trail (spec/kernel.md §10): every call that changes state and
 * every refused call is recorded with time, connection, door, tool, a digest
 * of the redacted arguments, provenance, result code and duration.
 */
import { digestOf } from './digest.js';
import { redact } from './redact.js';
import { connectionLabel } from './connection.js';
import type { AuditEntry, Provenance } from './records.js';
import type { AuditQuery, Store, StoreTx } from './store.js';
import type { EventBus } from './events.js';

export interface AuditRecord {
  connection: string;
  door: string;
  tool: string;
  args: unknown;
  provenance: Provenance | null;
  result: string;
  durationMs: number;
  /** The policy's decision and the rule that made it (authority.md §3). */
  decision?: 'allow' | 'ask' | 'deny' | null;
  rule?: string | null;
}

export interface Audit {
  record(entry: AuditRecord): Promise<AuditEntry>;
  /**
   * Appends the entry inside the caller's transaction, so it commits with
   * the write it describes (one commit instead of two); `announce` it once
   * that transaction committed.
   */
  recordIn(tx: StoreTx, entry: AuditRecord): Promise<AuditEntry>;
  /** Publishes `auditRecorded` for an entry `recordIn` stored. */
  announce(entry: AuditEntry): void;
  /**
   * An action of the owner (approve, deny, revoke, agent and token changes),
   * recorded as the owner (authority.md §3). `result` is `ok` or a failure code.
   */
  ownerAction(tool: string, door: string, args: unknown, result?: string): Promise<AuditEntry>;
  list(query?: AuditQuery): Promise<AuditEntry[]>;
  /** JSON lines, oldest first. */
  exportJsonLines(query?: AuditQuery): Promise<string>;
}

export function createAudit({
  store,
  events,
  now = Date.now,
}: {
  store: Store;
  events?: EventBus;
  now?: () => number;
}): Audit {
  const append = (tx: StoreTx, { args, decision = null, rule = null, ...rest }: AuditRecord) =>
    tx.audit.append({
      ...rest,
      decision,
      rule,
      connection: connectionLabel(rest.connection),
      at: now(),
      argsDigest: digestOf(redact(args)),
    });
  const audit: Audit = {
    async record(record) {
      const entry = await store.transaction((tx) => append(tx, record), { isolation: 'keyed' });
      audit.announce(entry);
      return entry;
    },
    recordIn: append,
    announce(entry) {
      events?.publish({ event: 'auditRecorded', entry });
    },
    ownerAction: (tool, door, args, result = 'ok') =>
      audit.record({
        connection: 'owner',
        door,
        tool,
        args,
        provenance: null,
        result,
        durationMs: 0,
      }),
    list: (query) => store.read((tx) => tx.audit.list(query)),
    async exportJsonLines(query) {
      const entries = await store.read((tx) => tx.audit.list(query));
      return entries.map((e) => JSON.stringify(e) + '\n').join('');
    },
  };
  return audit;
}
