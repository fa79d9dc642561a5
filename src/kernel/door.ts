/**
 * What a door gives the kernel: its tools, limits, how outcomes look on its
 * wire format, and (optionally) how to resolve operations left uncertain.
 * A door never imports another door, and never re-implements a kernel stage.
 */
import type { Failure } from './errors.js';
import type { JournalEntry, ResourceRef } from './records.js';
import type { Resolution } from './journal.js';
import type { AnyToolDef, Limits } from './tool.js';
import type { Kernel } from './kernel.js';

/** A CallToolResult as the MCP wire carries it. */
export interface ToolResult {
  content: Array<Record<string, unknown> & { type: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** An outcome shown as a JSON-RPC error instead of a tool result (e.g. scene's −32600). */
export interface ProtocolErrorOutcome {
  protocolError: { code: number; message: string; data?: unknown };
}

export type Presented = ToolResult | ProtocolErrorOutcome;

export interface Presenter {
  success(tool: AnyToolDef, value: unknown): Presented;
  failure(tool: AnyToolDef, failure: Failure): Presented;
}

/** A REST route a door adds under `/api/v1` (path relative to it, e.g. `notes/projects`). */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path pattern with `{param}` segments, relative to /api/v1. */
  path: string;
  summary: string;
  /** Body cap for this route when it needs more than the server's default (uploads). */
  maxBodyBytes?: number;
  handler(request: RestRequest): Promise<RestResponse>;
}

export interface RestRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body, or raw bytes for non-JSON content types. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export interface RestResponse {
  status: number;
  body?: unknown;
  /** Raw bytes with their content type, instead of JSON. */
  raw?: { bytes: Uint8Array; contentType: string; filename?: string };
}

/**
 * What the MCP request carrying one `tools/call` says beyond the arguments,
 * for the few doors that need it (multi-round-trip input, log
 * notifications). The transport computes it; the kernel pipeline never sees it.
 */
export interface McpRequestScope {
  /** Capabilities the client declared: the initialize handshake, or the 2026-07-28 per-request `_meta`. */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** Answers to the `inputRequests` of an earlier `input_required` round, keyed as the door asked. Untrusted. */
  readonly inputResponses: Readonly<Record<string, unknown>> | undefined;
  /** The `requestState` the client echoed back, verbatim. Untrusted: verify before use. */
  readonly requestState: string | undefined;
  /** Sends `notifications/message` for this request, honouring the client's log level. */
  log(
    level: 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency',
    data: unknown,
  ): Promise<void>;
  /** Closes this request's SSE stream so the client resumes it, where the transport supports that. */
  readonly closeStream?: (() => void) | undefined;
}

export interface Door {
  /** Door kind (`notes`), the scope of its grants and journal. */
  readonly name: string;
  /** Mount name when a door is mounted several times (openapi prefixes); defaults to `name`. */
  readonly mount?: string;
  readonly tools: readonly AnyToolDef[];
  readonly limits?: Partial<Limits>;
  readonly presenter?: Presenter;
  readonly routes?: readonly RestRoute[];
  /** Server instructions sent in the MCP initialize result. */
  readonly instructions?: string;
  /** Decide an operation left prepared or uncertain (default: a store write that never committed). */
  resolveOperation?(entry: JournalEntry): Promise<Resolution>;
  /** Called once the kernel is ready (recover state, start timers). */
  start?(kernel: Kernel): Promise<void>;
  stop?(): Promise<void>;
  /** Extra MCP surface beyond tools (resources, prompts), registered on each server instance. */
  extendServer?(server: unknown, context: { connectionId: string }): void;
  /** MCP server capabilities for what `extendServer` adds (e.g. `{ prompts: {} }`), merged into the server's. */
  readonly capabilities?: Readonly<Record<string, unknown>>;
  /**
   * Runs one `tools/call` of this door with its MCP request in reach (e.g.
   * through AsyncLocalStorage). `call` is the whole kernel pipeline.
   */
  withMcpRequest?<T>(request: McpRequestScope, call: () => Promise<T>): Promise<T>;
  /**
   * Resources a person may pick when approving a grant of this door (e.g.
   * notes projects). Approvals must then name one of them, by id or name.
   */
  resources?(capability: string): Promise<ResourceRef[]>;
  /**
   * Static files the door serves from the workspace's HTTP root (e.g. the
   * page bridge at `/bridge.js`); null when the path is not the door's.
   */
  serveStatic?(path: string): Promise<{ bytes: Uint8Array; contentType: string } | null>;
  /** Lines for the server's start-up output (e.g. where the door's own listener is). */
  banner?(): string[];
  /** Extra fields for the SSE `snapshot` frame. */
  snapshot?(): Promise<Record<string, unknown>>;
}
