/**
 * How a door shows itself on a wire, beside what it gives the kernel
 * (`kernel/door.ts`): its MCP surface (how outcomes look as tool results,
 * server instructions, resources and prompts) and its HTTP surface (REST
 * routes, static files, start-up lines, the SSE snapshot). The composition
 * root mounts `ServedDoor`s on a `Kernel<ServedDoor>`; the kernel reads only
 * their `Door` part, the transport their surfaces. Doors import this module
 * for its types only.
 */
import type { Door } from '../kernel/door.js';
import type { Kernel } from '../kernel/kernel.js';
import type { Failure } from '../kernel/errors.js';
import type { AnyToolDef } from '../kernel/tool.js';
import type { Caller } from './auth.js';

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

/**
 * Turns a plain call outcome into the door's MCP wire format. `generic` is
 * the default presentation, for a door that changes only some outcomes.
 */
export interface Presenter {
  success(tool: AnyToolDef, value: unknown, generic: GenericPresenter): Presented;
  failure(tool: AnyToolDef, failure: Failure, generic: GenericPresenter): Presented;
}

/** The default presentation: JSON text, `structuredContent` when an output schema exists. */
export interface GenericPresenter {
  success(tool: AnyToolDef, value: unknown): ToolResult;
  failure(tool: AnyToolDef, failure: Failure): ToolResult;
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
  /**
   * Requests to the calling client during this call, related to it (a
   * 2025-era session or stdio); absent in the 2026-07-28 era, whose
   * requests cannot be asked mid-call. Capabilities are not checked here.
   */
  readonly client?:
    | {
        sample(params: unknown, options: { signal: AbortSignal }): Promise<unknown>;
        elicit(params: unknown, options: { signal: AbortSignal }): Promise<unknown>;
        listRoots(options: { signal: AbortSignal }): Promise<unknown>;
      }
    | undefined;
}

/**
 * How a tool takes part in the MCP tasks extension (SEP-2663,
 * `io.modelcontextprotocol/tasks`; mcp-tasks.ts). A client that negotiated
 * the extension gets a task handle instead of waiting for the result.
 */
export interface McpTaskSupport {
  /**
   * `optional`: a client without the extension gets the ordinary result;
   * `required`: such a client is refused with -32021.
   */
  readonly support: 'optional' | 'required';
  /**
   * For a tool whose result names a kernel job it started (`{jobId}`): the
   * job id, so the task follows that job (status, progress, result, cancel).
   */
  readonly jobOf?: (value: unknown) => string | null;
  /**
   * Input the tool asks for in the `tools/call` round trips before its task
   * starts (SEP-2322 multi-round-trip, then SEP-2663): an `input_required`
   * result to answer now, or null when nothing is missing.
   */
  readonly inputFirst?: (request: McpRequestScope) => Record<string, unknown> | null;
}

export interface McpSurface {
  /** Tools (by published name) offered as MCP tasks to clients that negotiated the extension. */
  readonly tasks?: Readonly<Record<string, McpTaskSupport>>;
  /** Default: JSON text, plus `structuredContent` when the tool has an output schema. */
  readonly presenter?: Presenter;
  /** Server instructions sent in the MCP initialize result. */
  readonly instructions?: string;
  /** MCP server capabilities for what `extendServer` adds (e.g. `{ prompts: {} }`), merged into the server's. */
  readonly capabilities?: Readonly<Record<string, unknown>>;
  /**
   * The exact names of the door's compact form (a search and a call tool):
   * listed instead of all its other tools by an endpoint serving several
   * mounts whose whole `tools/list` is over its token budget
   * (`McpServing.listBudgetTokens`), and not listed otherwise; callable
   * either way, as are the tools they stand for.
   */
  compactTools?(): readonly string[];
  /** Extra MCP surface beyond tools (resources, prompts), registered on each server instance. */
  extendServer?(server: unknown): void;
  /**
   * Runs one `tools/call` of this door with its MCP request in reach (e.g.
   * through AsyncLocalStorage). `call` is the whole kernel pipeline.
   */
  withMcpRequest?<T>(request: McpRequestScope, call: () => Promise<T>): Promise<T>;
}

/**
 * Who may use a route (authority.md §1): the owner only, an agent or the
 * owner, or anyone. Routes are the owner's unless they say otherwise.
 */
export type Audience = 'owner' | 'agent' | 'public';

/** A REST route a door adds under `/api/v1` (path relative to it, e.g. `notes/projects`). */
export interface RestRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Default `owner`. */
  audience?: Audience;
  /**
   * `json` (default): a body must be `application/json`. `raw`: the bytes as
   * sent (uploads), any content type.
   */
  body?: 'json' | 'raw';
  /** Path pattern with `{param}` segments, relative to /api/v1. */
  path: string;
  summary: string;
  /** Body cap for this route when it needs more than the server's default (uploads). */
  maxBodyBytes?: number;
  /**
   * An owner decision (issue 25): when the kernel requires the owner's
   * presence, the request must carry a proof (`x-airlock-presence`) bound
   * to this method, path and body — plus the facts this function adds (an
   * approval: the digest of the previewed call) — or it is refused before
   * the handler runs. `true`: no extra facts.
   */
  decides?: true | ((request: RestRequest) => Promise<Record<string, unknown>>);
  /**
   * A response, or a kernel `Failure` the HTTP layer maps to its one status
   * and `{status, code, message}` body. A thrown `AirlockError` is mapped the
   * same way; any other throw becomes `internal` with a log id.
   */
  handler(request: RestRequest): Promise<RestResponse | Failure>;
}

export interface RestRequest {
  params: Record<string, string>;
  /** Who is calling, as the transport established it (the route's audience was already checked). */
  caller?: Caller | null;
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
  /** Extra response headers (e.g. the session cookie). */
  headers?: Record<string, string>;
}

export interface HttpSurface {
  readonly routes?: readonly RestRoute[];
  /**
   * Static files the door serves from the workspace's HTTP root (e.g. the
   * page bridge at `/bridge.js`); null when the path is not the door's.
   */
  serveStatic?(path: string): Promise<{ bytes: Uint8Array; contentType: string } | null>;
  /** Lines for the server's start-up output (e.g. where the door's own listener is). */
  banner?(): string[];
  /**
   * Extra fields for the SSE `snapshot` frame, as `viewer.agent` may see
   * them (null: the owner). An agent's frame holds nothing of another
   * principal's and no absolute paths (issue 24).
   */
  snapshot?(viewer: { agent: string | null }): Promise<Record<string, unknown>>;
}

/** A door with the surfaces it shows on the workspace's wires. */
export interface ServedDoor extends Door {
  readonly mcp?: McpSurface;
  readonly http?: HttpSurface;
}

/** A kernel whose mounted doors carry their surfaces. */
export type ServingKernel = Kernel<ServedDoor>;
