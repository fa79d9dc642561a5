/**
 * Audit entries a group writer inserts at the end of its group (issue 31):
 * a write's `tx.audit.append` hands back the entry at once (`defer`), and
 * the group's last statements insert every kept write's entries together —
 * one multi-row INSERT instead of one per write. `fill` gives each handed-out
 * entry its id and hashes before any caller is answered; a write that rolls
 * back simply never passes its entries on.
 */
import type { AuditEntry, NewAuditEntry } from '../../kernel/records.js';

export interface DeferredAudit {
  /** This write's entries so far, in append order. */
  readonly entries: AuditEntry[];
  /** `SqlClient.deferAudit`: the entry, its id and hashes filled in at the group's end. */
  defer(entry: NewAuditEntry): AuditEntry;
}

export function deferredAudit(): DeferredAudit {
  const entries: AuditEntry[] = [];
  return {
    entries,
    defer(entry) {
      const placeholder: AuditEntry = { ...entry, id: 0, prevHash: null, hash: null };
      entries.push(placeholder);
      return placeholder;
    },
  };
}

/** Copies the stored ids and hashes onto the handed-out entries (same order). */
export function fillDeferred(handedOut: AuditEntry[], stored: readonly AuditEntry[]): void {
  if (stored.length !== handedOut.length) throw new Error('audit insert returned too few ids');
  handedOut.forEach((entry, i) => {
    const row = stored[i]!;
    entry.id = row.id;
    entry.prevHash = row.prevHash;
    entry.hash = row.hash;
  });
}
