/**
 * The kernel's persisted records. Each is a zod schema (the REST API and the
 * store both use these shapes) and the type derived from it.
 * Times are epoch milliseconds.
 */
import { z } from 'zod';

/** Who acted, as stored with every write (spec/kernel.md §6). */
export const ProvenanceSchema = z.object({
  provider: z.string(),
  model: z.string(),
  promptVersion: z.string(),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

/** A resource a person chose when approving (e.g. a notes project). */
export const ResourceRefSchema = z.object({ id: z.string(), name: z.string() });
export type ResourceRef = z.infer<typeof ResourceRefSchema>;

export const GrantSchema = z.object({
  id: z.string(),
  connection: z.string(),
  door: z.string(),
  capability: z.string(),
  resource: ResourceRefSchema.nullable(),
  createdAt: z.number(),
  expiresAt: z.number(),
  revokedAt: z.number().nullable(),
});
export type Grant = z.infer<typeof GrantSchema>;

/**
 * `expired`: undecided for 15 minutes; `cancelled`: the asking session ended
 * first (authority.md §2). Neither stays in the inbox.
 */
export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired', 'cancelled'] as const;
/**
 * `consent`: an agent asks for a grant (the notes door's request-access
 * tools). `policy`: the owner's policy asked before one exact call runs
 * (authority.md §3).
 */
export const APPROVAL_KINDS = ['consent', 'policy'] as const;
/**
 * How the owner approved a policy ask: this exact call once, this rule, agent
 * and target for 15 minutes, or that narrowed to the call's subject (the same
 * file, note or page; `preview.subject`) for 15 minutes.
 */
export const APPROVAL_SCOPES = ['once', '15m', '15m-subject'] as const;
export type ApprovalScope = (typeof APPROVAL_SCOPES)[number];
export const ApprovalSchema = z.object({
  id: z.string(),
  kind: z.enum(APPROVAL_KINDS),
  connection: z.string(),
  /**
   * The asking agent's key (its name and id, connection.ts `agentKey`);
   * null for connections that are no agent's. The inbox shows the name.
   */
  agent: z.string().nullable(),
  door: z.string(),
  /** Consent: the capability asked for. Policy: `policy`. */
  capability: z.string(),
  /** Policy asks: the tool, the digest of its validated arguments, its target and the rule that asked. */
  tool: z.string().nullable(),
  digest: z.string().nullable(),
  target: z.string().nullable(),
  rule: z.string().nullable(),
  /** What the owner judges: door-made, secrets redacted. */
  preview: z.unknown().nullable(),
  /** Policy asks: how the owner approved. */
  scope: z.enum(APPROVAL_SCOPES).nullable(),
  /** The owner's reason for a denial, shown to the agent. */
  reason: z.string().nullable(),
  /** When an approved-once call ran (it runs once). */
  usedAt: z.number().nullable(),
  /** Human-readable line for the inbox: which client asks for what. */
  summary: z.string(),
  status: z.enum(APPROVAL_STATUSES),
  /** Lifetime the grant gets when approved, in ms. */
  lifetimeMs: z.number(),
  createdAt: z.number(),
  decidedAt: z.number().nullable(),
  resource: ResourceRefSchema.nullable(),
  grantId: z.string().nullable(),
  /**
   * Policy asks: when the asking connection ended (2025-era session closed
   * or expired, stdio process gone). The ask stays for the owner, bound to
   * the agent and the call, and expires `orphanMs` later.
   */
  orphanedAt: z.number().nullish(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

/** Journal states as stored; the wire names are in journal.ts. */
export const JOURNAL_STATES = ['prepared', 'committed', 'uncertain'] as const;
export type JournalState = (typeof JOURNAL_STATES)[number];
export const JournalEntrySchema = z.object({
  /** The door (and mount) the operation belongs to; operation ids are unique per scope. */
  scope: z.string(),
  operationId: z.string(),
  /** SHA-256 hex of the canonical request arguments. */
  digest: z.string(),
  state: z.enum(JOURNAL_STATES),
  tool: z.string(),
  connection: z.string(),
  /** Door-chosen key of the resource written (e.g. a document id), to resolve uncertain entries. */
  target: z.string().nullable(),
  receipt: z.unknown().nullable(),
  provenance: ProvenanceSchema.nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  expiresAt: z.number(),
});
export type JournalEntry = z.infer<typeof JournalEntrySchema>;

export const AuditEntrySchema = z.object({
  id: z.number().int(),
  at: z.number(),
  connection: z.string(),
  door: z.string(),
  tool: z.string(),
  /** SHA-256 hex of the arguments with secrets redacted. */
  argsDigest: z.string(),
  provenance: ProvenanceSchema.nullable(),
  /** `ok` or an error code. */
  result: z.string(),
  durationMs: z.number(),
  /** The policy's decision for the call (authority.md §3), null when none was made. */
  decision: z.enum(['allow', 'ask', 'deny']).nullable(),
  /** The rule that decided: a rule id, `readOnly` or `default:<effect>`. */
  rule: z.string().nullable(),
  /** The hash of the entry before it (audit-chain.ts); null on entries older than the chain. */
  prevHash: z.string().nullable(),
  /** This entry's link in the chain: SHA-256 of prevHash, id and content. */
  hash: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;
/** What an appender gives: the store numbers the entry and links it into the chain. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'prevHash' | 'hash'>;

export const JOB_STATUSES = [
  'queued',
  'running',
  'completed',
  'completed_with_errors',
  'cancelled',
  'failed',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const JobProgressSchema = z.object({
  step: z.string().nullable(),
  currentUnit: z.number().int(),
  totalUnits: z.number().int(),
  currentStepIndex: z.number().int(),
  totalSteps: z.number().int(),
  overallPercent: z.number(),
});
export type JobProgress = z.infer<typeof JobProgressSchema>;
export const JobWarningSchema = z.object({
  at: z.number(),
  where: z.record(z.string(), z.unknown()),
  message: z.string(),
});
export type JobWarning = z.infer<typeof JobWarningSchema>;
export const JobSchema = z.object({
  id: z.string(),
  door: z.string(),
  kind: z.string(),
  status: z.enum(JOB_STATUSES),
  progress: JobProgressSchema,
  warnings: z.array(JobWarningSchema),
  error: z.string().nullable(),
  /** Door-defined input, kept so a door may resume the job after a restart. */
  input: z.unknown(),
  /**
   * The agent that started the job: only it and the owner find the job
   * (authority.md §1); null for the owner's and internal jobs.
   */
  agent: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export type Job = z.infer<typeof JobSchema>;

/** A door's own data: JSON values in named collections, ordered by key. */
export interface StoredRecord<T = unknown> {
  collection: string;
  key: string;
  value: T;
  updatedAt: number;
}
