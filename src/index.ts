/**
 * `airlock` — the toolkit's public API. Every export here is a promise: it
 * keeps its name and meaning across minor versions. Anything not exported
 * here is internal and may change.
 *
 * @example
 * import { createKernel, createEventBus, openStore, createHttpApp, defineTool, silentLogger } from 'airlock';
 */

// Kernel: tools, doors, errors
export { defineTool, DEFAULT_LIMITS } from './kernel/tool.js';
export type {
  ToolDef,
  AnyToolDef,
  ToolContext,
  ToolAnnotations,
  Limits,
  JournalSpec,
} from './kernel/tool.js';
export type { Door } from './kernel/door.js';
export type {
  ServedDoor,
  McpSurface,
  HttpSurface,
  Presenter,
  Presented,
  ToolResult,
  RestRoute,
  RestRequest,
  RestResponse,
} from './transport/surface.js';
export { defaultPresenter, presentOutcome } from './transport/present.js';
export { createKernel, jsonSchemaOf } from './kernel/kernel.js';
export type { CallOutcome, CallOptions } from './kernel/pipeline.js';
export type { Kernel, KernelOptions, ToolDescriptor } from './kernel/kernel.js';
export {
  ERROR_CODES,
  DEFAULT_MESSAGES,
  AirlockError,
  failure,
  isFailure,
} from './kernel/errors.js';
export type { ErrorCode, Failure } from './kernel/errors.js';
export { utf8String, uuidString, hex64String } from './kernel/schemas.js';
export { connection } from './kernel/connection.js';
export type { Connection, ConnectionKind } from './kernel/connection.js';

// Kernel services
export { createEventBus } from './kernel/events.js';
export type { EventBus, AirlockEvent, DeliveredEvent, BusTransport } from './kernel/events.js';
export { openHistory } from './kernel/history.js';
export type { History, Reducer, HistoryLog, HistorySnapshot, LogEntry } from './kernel/history.js';
export type { JobRegistry, JobSpec, JobContext } from './kernel/jobs.js';
export type { Consent, ConsentRequest } from './kernel/consent.js';
export type { Journal, OperationState, Resolution } from './kernel/journal.js';
export { silentLogger } from './kernel/logger.js';
export type { Logger } from './kernel/logger.js';
export type { Store, StoreTx, BlobStore } from './kernel/store.js';
export type {
  Grant,
  Approval,
  AuditEntry,
  Job,
  JournalEntry,
  Provenance,
  ResourceRef,
} from './kernel/records.js';

// Storage and transport
export { openStore } from './store/open.js';
export { createFileHistoryLog } from './store/history-file.js';
export { createRedisBusTransport } from './store/redis-bus.js';
export { createHttpApp } from './transport/http-app.js';
export type { HttpApp, HttpAppOptions } from './transport/http-app.js';
export { createMcpServer } from './transport/mcp-server.js';
