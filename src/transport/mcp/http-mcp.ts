/**
 * MCP over HTTP for the workspace: `/mcp` serves every door, `/mcp/<mount>`
 * one door. One endpoint (session table, both protocol eras) per path,
 * created on first use.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../kernel/logger.js';
import { createMcpEndpoint, type McpEndpoint } from './mcp-http.js';
import { readBody, sendJsonRpcError } from '../http/http-util.js';
import type { ServingKernel } from '../surface.js';
import type { McpServing } from './mcp-server.js';
import type { McpRequestTracer } from './mcp-trace.js';
import { mountOf } from '../../kernel/kernel.js';
import { MAX_JSON_DEPTH, textNestsDeeperThan } from '../../kernel/calls/json-depth.js';

/**
 * The JSON nesting cap for one MCP message (authority.md §4): the message and
 * its `params` (or `result`) wrap the payload, so tool arguments keep their
 * full 64 levels. The SDK serialises and walks messages recursively; a deeper
 * one is refused before it is parsed.
 */
const MESSAGE_DEPTH = MAX_JSON_DEPTH + 2;

export interface McpDispatchOptions {
  kernel: ServingKernel;

  logger: Logger;
  maxBodyBytes: number;
  serving?: McpServing;
  /** A server span per MCP request (telemetry on); none: no tracing at all. */
  tracer?: McpRequestTracer | undefined;
  /** Idle 2025-era sessions end after this long (default 10 min). */
  sessionIdleMs?: number;
}

export interface McpDispatch {
  handle(req: IncomingMessage, res: ServerResponse, path: string, agent: string): Promise<void>;
  /** Open 2025-era sessions over every endpoint (the 2026 era keeps none). */
  sessionCount(): number;
  close(): Promise<void>;
}

export function createMcpDispatch(options: McpDispatchOptions): McpDispatch {
  const { kernel, logger, maxBodyBytes, serving } = options;
  const mounts = kernel.doors().map(mountOf);
  const endpoints = new Map<string, McpEndpoint>();
  const endpoint = (key: string, served: string[]) => {
    let e = endpoints.get(key);
    if (!e) {
      e = createMcpEndpoint({
        kernel,
        mounts: served,
        logger,
        maxBodyBytes,
        ...(options.sessionIdleMs ? { sessionIdleMs: options.sessionIdleMs } : {}),
        // `/mcp/NAME` lists all of its door's tools (paged), never the compact form.
        serving: { ...serving, ...(key === '*' ? {} : { oneMount: true }) },
      });
      endpoints.set(key, e);
    }
    return e;
  };

  return {
    sessionCount: () => [...endpoints.values()].reduce((n, e) => n + e.sessionCount, 0),
    async handle(req, res, path, agent) {
      let mount: string | null = null;
      if (path !== '/mcp') {
        try {
          mount = decodeURIComponent(path.slice('/mcp/'.length));
        } catch {
          sendJsonRpcError(res, 400, -32600, `The path ${path} is not valid percent-encoding.`);
          return;
        }
      }
      if (mount !== null && !mounts.includes(mount)) {
        sendJsonRpcError(
          res,
          404,
          -32601,
          `No door '${mount}' here; available: ${mounts.map((m) => `/mcp/${m}`).join(', ') || 'none'}.`,
        );
        return;
      }
      let body: unknown;
      if (req.method === 'POST') {
        const text = (await readBody(req, maxBodyBytes)).toString('utf8');
        if (textNestsDeeperThan(text, MESSAGE_DEPTH)) {
          sendJsonRpcError(
            res,
            400,
            -32600,
            `Invalid request: the message nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays below its params; flatten the arguments (at most ${MAX_JSON_DEPTH} levels) and send again.`,
          );
          return;
        }
        try {
          body = JSON.parse(text);
        } catch {
          sendJsonRpcError(
            res,
            400,
            -32700,
            'Parse error: the request body is not valid JSON; send one JSON-RPC message.',
          );
          return;
        }
      }
      const e = mount === null ? endpoint('*', mounts) : endpoint(mount, [mount]);
      if (options.tracer && body !== undefined)
        await options.tracer.request({ message: body, headers: req.headers, res }, () =>
          e.handle(req, res, body, agent),
        );
      else await e.handle(req, res, body, agent);
    },
    async close() {
      await Promise.all([...endpoints.values()].map((e) => e.close()));
    },
  };
}
