/**
 * Bounded growth (issue #16): what the kernel itself stores about calls is
 * kept for a while, then pruned, so a steady load keeps the database a
 * steady size. Journal entries (receipts) expire after `journalMs` (24 h by
 * default, spec/kernel.md §6); audit entries older than `auditMs` (default
 * 90 days; `null` keeps them forever) are handed to `archiveAudit` as JSON
 * lines first, when given, and deleted only once it resolved.
 */
import { z } from 'zod';
import { ANCHOR_KEY, CHAIN_COLLECTION } from './audit-chain.js';
import { writeCheckpoint, type StoredAnchor } from './audit-seal.js';
import { signStatement, type AnchorStatement, type AuditSigner } from './audit-signing.js';
import type { Journal } from '../writes/journal.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store.js';

export const DEFAULT_AUDIT_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;
export const DEFAULT_SWEEP_EVERY_MS = 10 * 60 * 1000;
/** Audit entries pruned per transaction: bounds each sweep step's lock time. */
const AUDIT_PAGE = 1000;

/** The config file's `retention` section (hours and days, as people write them). */
export const RetentionConfigSchema = z
  .object({
    journalHours: z.number().positive().optional(),
    /** Days; 0 keeps the audit trail forever. */
    auditDays: z.number().min(0).optional(),
    /** A file (relative to the data folder) the pruned audit entries are appended to. */
    auditArchive: z.string().min(1).optional(),
    sweepMinutes: z.number().positive().optional(),
  })
  .strict();
export type RetentionConfig = z.infer<typeof RetentionConfigSchema>;

export interface RetentionOptions {
  /** Journal entries (receipts) are kept this long; default 24 h. */
  journalMs?: number;
  /** Audit entries are kept this long; null keeps them forever. Default 90 days. */
  auditMs?: number | null;
  /** How often the sweep runs; default 10 minutes. */
  sweepEveryMs?: number;
  /** Receives pruned audit entries as JSON lines (oldest first) before they are deleted. */
  archiveAudit?: (jsonLines: string) => Promise<void>;
  /**
   * Signs the audit chain's anchor when pruning moves it, and a checkpoint
   * of the chain's head at every sweep (audit-seal.ts).
   */
  auditSigner?: AuditSigner;
}

export interface Retention {
  /** Prunes what has expired now; returns what it removed. */
  sweep(): Promise<{ journal: number; audit: number }>;
  start(): void;
  /** Stops the timer and waits for a sweep under way. */
  stop(): Promise<void>;
}

export function createRetention({
  store,
  journal,
  options = {},
  logger,
  now = Date.now,
}: {
  store: Store;
  journal: Journal;
  options?: RetentionOptions;
  logger: Logger;
  now?: () => number;
}): Retention {
  const auditMs = options.auditMs === undefined ? DEFAULT_AUDIT_RETENTION_MS : options.auditMs;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  const pruneAudit = async (): Promise<number> => {
    if (auditMs === null) return 0;
    const before = now() - auditMs;
    let pruned = 0;
    for (;;) {
      const page = await store.read((tx) => tx.audit.list({ before, limit: AUDIT_PAGE }));
      const last = page[page.length - 1];
      if (!last) return pruned;
      // Archived first: an entry is deleted only once the owner's copy is written.
      if (options.archiveAudit)
        await options.archiveAudit(page.map((e) => JSON.stringify(e) + '\n').join(''));
      // The chain's anchor moves forward with the pruning, in the same
      // transaction: the oldest kept entry follows it (audit-chain.ts).
      const statement: AnchorStatement = {
        kind: 'airlock.audit.anchor/1',
        id: last.id,
        hash: last.hash ?? '',
        at: now(),
      };
      const anchor: StoredAnchor = options.auditSigner
        ? signStatement(options.auditSigner, statement)
        : statement;
      pruned += await store.transaction(
        async (tx) => {
          if (last.hash) await tx.records.put(CHAIN_COLLECTION, ANCHOR_KEY, anchor);
          return tx.audit.deleteThrough(last.id);
        },
        { isolation: 'keyed' },
      );
      if (page.length < AUDIT_PAGE) return pruned;
    }
  };

  const sweep = async () => {
    const swept = { journal: await journal.purgeExpired(), audit: await pruneAudit() };
    if (options.auditSigner) await writeCheckpoint(store, options.auditSigner, now);
    return swept;
  };

  return {
    sweep,
    start() {
      timer = setInterval(() => {
        if (running) return;
        running = sweep()
          .catch((err: unknown) => logger.warn({ err }, 'retention sweep failed'))
          .finally(() => (running = undefined));
      }, options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Kernel retention options from the config file's `retention` section. */
export function retentionFromConfig(
  config: RetentionConfig,
  archiveAudit?: (jsonLines: string) => Promise<void>,
): RetentionOptions {
  const hour = 60 * 60 * 1000;
  return {
    ...(config.journalHours !== undefined ? { journalMs: config.journalHours * hour } : {}),
    ...(config.auditDays !== undefined
      ? { auditMs: config.auditDays === 0 ? null : config.auditDays * 24 * hour }
      : {}),
    ...(config.sweepMinutes !== undefined ? { sweepEveryMs: config.sweepMinutes * 60_000 } : {}),
    ...(archiveAudit ? { archiveAudit } : {}),
  };
}
