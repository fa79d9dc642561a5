/**
 * The audit trail (spec/kernel.md §10): every call that changes state and
 * every refused call is recorded with time, connection, door, tool, a digest
 * of the redacted arguments, provenance, result code and duration.
 *
 * Reads that passed by default and are audited anyway (`auditEveryCall`, the
 * mcp door's `auditReads`) go to a bounded asynchronous tail (issue 16): the
 * call is answered at once and its entry is written with the others of the
 * next `maxDelayMs` (50 ms) in one transaction — one commit, one fsync — on a
 * timer, when `maxEntries` (256) are waiting, before any other audit write,
 * before a listing, and on `close`. A crash loses at most that tail — the
 * reads whose batch had not committed: those answered in the last
 * `maxDelayMs` and the batch being written — and always fewer than
 * `maxEntries`: a read that finds the tail full waits until its entry is
 * written, so the count bound holds however slow the disk is.
 */
import { digestOf } from '../digest.js';
import { redact } from './redact.js';
import { connectionLabel } from '../connection.js';
import type { AuditEntry, NewAuditEntry, Provenance } from '../records.js';
import type { AuditQuery, Store, StoreTx } from '../store.js';
import type { EventBus } from '../events/events.js';

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

/** The bound of the reads' asynchronous tail (see the header). */
export interface AuditTailOptions {
  /** Most entries written late at once; a read past it waits for its entry. Default 256. */
  maxEntries?: number;
  /** Longest an entry waits before its batch is written. Default 50 ms. */
  maxDelayMs?: number;
}

export const AUDIT_TAIL = { maxEntries: 256, maxDelayMs: 50 } as const;

export interface Audit {
  record(entry: AuditRecord): Promise<AuditEntry>;
  /**
   * Queues a read's entry on the tail (see the header). Null when the
   * caller may answer at once; when the tail is full, a promise that settles
   * once this entry is durable, which the caller awaits before answering.
   */
  recordLater(entry: AuditRecord): Promise<void> | null;
  /** Writes the queued tail now; resolves once every entry queued so far is durable (or failed). */
  flush(): Promise<void>;
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
  tail = {},
  onTailError,
}: {
  store: Store;
  events?: EventBus;
  now?: () => number;
  tail?: AuditTailOptions;
  /** A tail batch that could not be written (the entries in it are lost; `count` says how many). */
  onTailError?: (error: unknown, count: number) => void;
}): Audit {
  const maxEntries = tail.maxEntries ?? AUDIT_TAIL.maxEntries;
  const maxDelayMs = tail.maxDelayMs ?? AUDIT_TAIL.maxDelayMs;
  const entryOf = ({ args, decision = null, rule = null, ...rest }: AuditRecord) => ({
    ...rest,
    decision,
    rule,
    connection: connectionLabel(rest.connection),
    at: now(),
    argsDigest: digestOf(redact(args)),
  });
  const append = (tx: StoreTx, record: AuditRecord) => tx.audit.append(entryOf(record));

  // The tail: entries queued for the next batch, and how many are not yet durable.
  let queued: NewAuditEntry[] = [];
  let unsettled = 0;
  let timer: NodeJS.Timeout | undefined;
  let written: Promise<void> = Promise.resolve();
  const writeTail = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (queued.length === 0) return written;
    const batch = queued;
    queued = [];
    const done = store
      .transaction((tx) => tx.audit.appendMany(batch), { isolation: 'keyed' })
      .then(
        (entries) => entries.forEach((entry) => audit.announce(entry)),
        (error: unknown) => onTailError?.(error, batch.length),
      )
      .finally(() => {
        unsettled -= batch.length;
      });
    written = Promise.all([written, done]).then(() => undefined);
    return done;
  };

  const audit: Audit = {
    async record(record) {
      // The tail first (the writer keeps order), so ids follow the calls' answers.
      void writeTail();
      const entry = await store.transaction((tx) => append(tx, record), { isolation: 'keyed' });
      audit.announce(entry);
      return entry;
    },
    recordLater(record) {
      queued.push(entryOf(record));
      unsettled += 1;
      // Full: written now, and this caller waits for it and every earlier batch
      // (PostgreSQL may commit groups of one instance side by side, issue 31).
      if (unsettled >= maxEntries) return audit.flush();
      timer ??= setTimeout(writeTail, maxDelayMs);
      return null;
    },
    flush() {
      void writeTail();
      return written;
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
    async list(query) {
      await audit.flush();
      return store.read((tx) => tx.audit.list(query));
    },
    async exportJsonLines(query) {
      await audit.flush();
      const entries = await store.read((tx) => tx.audit.list(query));
      return entries.map((e) => JSON.stringify(e) + '\n').join('');
    },
  };
  return audit;
}
