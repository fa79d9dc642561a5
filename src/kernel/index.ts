/**
 * The kernel's public surface: what doors, the transport and the toolkit's
 * users may rely on. Doors import the kernel only through this file (a lint
 * rule enforces it), so what is not exported here is the kernel's own
 * business and may change. Every export is a promise.
 */

// Tools, limits and the pipeline's outcomes
export { defineTool, DEFAULT_LIMITS, resultCharsOf } from './tool.js';
export { effectOf, publishedEffectOf, annotationsOf } from './calls/effect.js';
export type {
  ToolDef,
  AnyToolDef,
  CallPolicySpec,
  ToolContext,
  ToolAnnotations,
  Effect,
  EffectHint,
  Limits,
  JournalSpec,
} from './tool.js';
export type { CallOptions, CallOutcome } from './calls/pipeline.js';
export type { Door, DoorStatus, UpstreamHealth } from './door.js';
export { createKernel, jsonSchemaOf, mountOf } from './kernel.js';
export type { Kernel, KernelOptions, KernelServices, ToolDescriptor } from './kernel.js';

// One error vocabulary
export {
  ERROR_CODES,
  DEFAULT_MESSAGES,
  AirlockError,
  failure,
  internalFailure,
  isErrorCode,
  isFailure,
} from './errors.js';
export type { ErrorCode, Failure } from './errors.js';

// Validation and the shapes doors share
export { validateInput, describeIssue, describeValue } from './calls/validate.js';
export { utf8String, uuidString, hex64String } from './calls/schemas.js';
export { callDigest, canonicalJson, digestOf, sha256Hex, utf8Bytes } from './digest.js';
export { REDACTED, isSecretName, redact } from './audit/redact.js';
export { checkResponseBytes } from './calls/limits.js';
export {
  wireForms,
  createScrubber,
  scrubValue,
  scrubTextBlocks,
  scrubbedLogger,
  type Scrubber,
} from './audit/scrub.js';
export { isObject } from './objects.js';
export { AIRLOCK_VERSION } from './version.js';
export { closestWord } from './calls/closest.js';
export { blobHash, isBlobHash } from './blob-hash.js';

// Identity and services
export {
  agentKey,
  agentKeyOf,
  agentKeyOfConnection,
  agentNameOf,
  agentOfConnection,
  agentPart,
  connection,
  connectionLabel,
} from './connection.js';
export type { Connection, ConnectionKind } from './connection.js';
export { createEventBus } from './events/events.js';
export { storeEventLog, EVENT_LOG_RETAIN } from './events/event-log.js';
export type {
  AirlockEvent,
  BusMessage,
  BusTransport,
  EventLog,
  DeliveredEvent,
  EventBus,
  EventBusOptions,
  EventListener,
} from './events/events.js';
export { openHistory, HistoryConflict } from './writes/history.js';
export type {
  History,
  HistoryLog,
  HistoryOptions,
  HistorySnapshot,
  HistoryStep,
  LogEntry,
  OperationMark,
  PendingMove,
  Reducer,
} from './writes/history.js';
export { percentOf, isFinal } from './jobs.js';
export type {
  JobContext,
  JobOutcome,
  JobRegistry,
  JobSpec,
  JobView,
  ProgressUpdate,
  ResumedJob,
} from './jobs.js';
export type { Consent, ConsentRequest } from './authority/consent.js';
export { createPrincipals, newToken, tokenHash, AgentName } from './authority/principals.js';
export type { AgentInfo, OwnerSession, Principal, Principals } from './authority/principals.js';
export {
  DECISIONS,
  DEFAULT_DECISIONS,
  PolicyConfigSchema,
  PolicyRuleSchema,
  ReadOnlySchema,
  evaluate,
  globMatches,
} from './authority/policy.js';
export type {
  Decision,
  ListedRule,
  Policy,
  PolicyCall,
  PolicyConfig,
  PolicyRule,
  PolicyVerdict,
  PolicyView,
  ReadOnly,
} from './authority/policy.js';
export { ASK_LIFETIME_MS } from './authority/asks.js';
export type { Asks, Preview } from './authority/asks.js';
export { journalKey, operationOf } from './writes/journal.js';
export {
  RetentionConfigSchema,
  retentionFromConfig,
  type RetentionConfig,
  type RetentionOptions,
} from './audit/retention.js';
export type { Journal, OperationState, Resolution } from './writes/journal.js';
export type { Audit, AuditRecord } from './audit/audit.js';
export { silentLogger } from './logger.js';
export type { Logger, LogFn } from './logger.js';

// Storage interfaces (implementations live in store/)
export type { BlobStore, FolderStorage, JobQuery, Store, StoreTx } from './store.js';
export {
  ProvenanceSchema,
  ResourceRefSchema,
  GrantSchema,
  ApprovalSchema,
  JournalEntrySchema,
  AuditEntrySchema,
  JobSchema,
  JobProgressSchema,
  JobWarningSchema,
  JOB_STATUSES,
  APPROVAL_KINDS,
  APPROVAL_SCOPES,
} from './records.js';
export type {
  Approval,
  ApprovalScope,
  AuditEntry,
  Grant,
  Job,
  JobProgress,
  JobStatus,
  JobWarning,
  JournalEntry,
  Provenance,
  ResourceRef,
  StoredRecord,
} from './records.js';
