/**
 * MCP over streamable HTTP for one endpoint (`/mcp` or `/mcp/<door>`),
 * serving both protocol eras through the official SDK:
 *
 * - 2026-07-28 (per-request envelope): `createMcpHandler` with
 *   `legacy: 'reject'`; the connection is the authenticated principal.
 * - 2025-era: stateful sessions over `NodeStreamableHTTPServerTransport`;
 *   the connection is the MCP session. Requests are routed with the SDK's
 *   own `isLegacyRequest` classification.
 *
 * The body has already been read (capped) and parsed by the HTTP app.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import {
  NodeStreamableHTTPServerTransport,
  toNodeHandler,
  toWebRequest,
} from '@modelcontextprotocol/node';
import type { Server } from '@modelcontextprotocol/server';
import { createMcpServer } from './mcp-server.js';
import type { Logger } from '../kernel/logger.js';
import type { ServingKernel } from './surface.js';
import { sendJsonRpcError } from './http-util.js';

export interface McpEndpointOptions {
  kernel: ServingKernel;

  mounts: string[];
  logger: Logger;
  maxBodyBytes: number;
  /** Idle 2025-era sessions are closed after this long (default 30 min). */
  sessionIdleMs?: number;
  maxSessions?: number;
}

export interface McpEndpoint {
  /** `principal` is the authenticated bearer identity, if any. */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    principal: string | undefined,
  ): Promise<void>;
  readonly sessionCount: number;
  close(): Promise<void>;
}

interface Session {
  transport: NodeStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { kernel, mounts, logger } = options;
  const idleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
  const maxSessions = options.maxSessions ?? 1000;
  const sessions = new Map<string, Session>();

  const identify = ({
    sessionId,
    principal,
  }: {
    sessionId?: string | undefined;
    principal?: string | undefined;
  }) =>
    sessionId
      ? { id: `session:${sessionId}`, kind: 'http-session' as const }
      : { id: `principal:${principal ?? 'local'}`, kind: 'http-principal' as const };

  const factory = () => createMcpServer({ kernel, mounts, identify });
  const onerror = (error: Error) => logger.debug({ err: error.message }, 'mcp request rejected');
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    onerror,
    maxRequestBodySize: options.maxBodyBytes,
  });
  const modernNode = toNodeHandler(modern, { onerror, maxRequestBodySize: options.maxBodyBytes });

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, s] of sessions) if (s.lastSeen < cutoff) void closeSession(id);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  async function closeSession(id: string) {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    await s.transport.close().catch(() => undefined);
    await s.server.close().catch(() => undefined);
  }

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown) {
    if (sessions.size >= maxSessions) {
      sendJsonRpcError(
        res,
        503,
        -32000,
        `Too many open MCP sessions (${maxSessions}); close idle clients and retry.`,
      );
      return;
    }
    const server = factory();
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  return {
    async handle(req, res, body, principal) {
      if (principal)
        (req as IncomingMessage & { auth?: unknown }).auth = {
          token: '',
          clientId: principal,
          scopes: [],
        };
      const sessionHeader = req.headers['mcp-session-id'];
      const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
      if (sessionId) {
        const session = sessions.get(sessionId);
        if (!session) {
          sendJsonRpcError(
            res,
            404,
            -32001,
            'Session not found; it expired or the server restarted. Initialize a new session.',
          );
          return;
        }
        session.lastSeen = Date.now();
        await session.transport.handleRequest(req, res, body);
        return;
      }
      if (req.method !== 'POST') {
        sendJsonRpcError(
          res,
          req.method === 'GET' || req.method === 'DELETE' ? 400 : 405,
          -32000,
          'Bad Request: send an Mcp-Session-Id header (2025-era) or POST a 2026-07-28 request.',
        );
        return;
      }
      const legacy = await isLegacyRequest(await toWebRequest(req, body), body);
      if (!legacy) {
        await modernNode(req, res, body);
        return;
      }
      const isInitialize =
        typeof body === 'object' &&
        body !== null &&
        (body as { method?: unknown }).method === 'initialize';
      if (!isInitialize) {
        sendJsonRpcError(
          res,
          400,
          -32000,
          'Bad Request: no valid session; send initialize first (2025-era) or use the 2026-07-28 envelope.',
        );
        return;
      }
      await openSession(req, res, body);
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.keys()].map(closeSession));
      await modern.close();
    },
  };
}
