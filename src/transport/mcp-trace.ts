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

export interface McpRequestTracer {
  request(info: McpRequestInfo, handle: () => Promise<void>): Promise<void>;
}
