/**
 * The transport's tracing seam (issue 33): when telemetry is on, every MCP
 * request runs inside a server span (telemetry/tracing.ts implements this).
 * Off, no tracer is given and a request pays nothing.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

export interface McpRequestInfo {
  /** The parsed JSON-RPC body (a request, a notification, a response or a batch). */
  message: unknown;
  headers: IncomingHttpHeaders;
  /** Ends the span when the response is done (a stream may outlive the handler). */
  res: ServerResponse;
}

/** One stdio request's span: its handling runs `within` it; `end` when its response is sent. */
export interface StdioRequestSpan {
  within<T>(run: () => T): T;
  end(): void;
}

export interface McpRequestTracer {
  request(info: McpRequestInfo, handle: () => Promise<void>): Promise<void>;
  /** A request that came over stdio (null for what is not a request). */
  stdio(message: unknown): StdioRequestSpan | null;
}
