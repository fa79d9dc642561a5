/**
 * MCP over streamable HTTP for one endpoint (`/mcp` or `/mcp/<door>`),
 * serving both protocol eras through the official SDK:
 *
 * - 2026-07-28 (per-request envelope): `createMcpHandler` with
 *   `legacy: 'reject'`; the connection is the agent.
 * - 2025-era: stateful sessions over `NodeStreamableHTTPServerTransport`;
 *   the connection is (agent, session). A session belongs to the agent that
 *   opened it: its id sent with another agent's token finds nothing
 *   (authority.md §1). Requests are routed with the SDK's own
 *   `isLegacyRequest` classification.
 *
 * Caps (authority.md §4): at most 64 sessions per agent (a new one replaces
 * that agent's least recently used), idle sessions closed after 10 minutes,
 * and a revoked agent's sessions closed at once.
 *
 * The body has already been read (capped) and parsed, and the agent
 * authenticated, by the HTTP app.
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
  /** Idle 2025-era sessions are closed after this long (default 10 min). */
  sessionIdleMs?: number;
  /** Sessions per agent (default 64). */
  maxSessionsPerAgent?: number;
  /** Sessions in all (default 1000). */
  maxSessions?: number;
}

export interface McpEndpoint {
  /** `agent` is the authenticated agent the request acts as. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, agent: string): Promise<void>;
  readonly sessionCount: number;
  close(): Promise<void>;
}

interface Session {
  agent: string;
  transport: NodeStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { kernel, mounts, logger } = options;
  const idleMs = options.sessionIdleMs ?? 10 * 60 * 1000;
  const maxSessions = options.maxSessions ?? 1000;
  const perAgent = options.maxSessionsPerAgent ?? 64;
  const sessions = new Map<string, Session>();

  const identify = ({
    sessionId,
    principal,
  }: {
    sessionId?: string | undefined;
    principal?: string | undefined;
  }) =>
    sessionId
      ? {
          id: `agent:${principal}/session:${sessionId}`,
          kind: 'http-session' as const,
          agent: principal!,
          session: sessionId,
        }
      : { id: `agent:${principal}`, kind: 'http-principal' as const, agent: principal! };

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

  /** A session's pending approvals and grants end with it (authority.md §2). */
  const ended = (id: string, agent: string) =>
    void kernel.consent
      .endConnection(`agent:${agent}/session:${id}`)
      .catch((err: unknown) => logger.warn({ err }, 'could not end the session’s approvals'));

  async function closeSession(id: string) {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    ended(id, s.agent);
    await s.transport.close().catch(() => undefined);
    await s.server.close().catch(() => undefined);
  }

  // A revoked agent's open sessions end at once (its token already fails).
  const unsubscribe = kernel.events.subscribe(({ data }) => {
    if (data.event !== 'agentsChanged' || data.change !== 'revoked') return;
    for (const [id, s] of sessions) if (s.agent === data.agent) void closeSession(id);
  });

  /** Makes room for one more session of `agent`: its least recently used goes past the cap. */
  async function makeRoom(agent: string) {
    const own = [...sessions].filter(([, s]) => s.agent === agent);
    if (own.length < perAgent) return;
    own.sort(([, a], [, b]) => a.lastSeen - b.lastSeen);
    await Promise.all(own.slice(0, own.length - perAgent + 1).map(([id]) => closeSession(id)));
  }

  async function openSession(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    agent: string,
  ) {
    await makeRoom(agent);
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
        sessions.set(id, { agent, transport, server, lastSeen: Date.now() });
      },
      onsessionclosed: (id) => {
        if (sessions.delete(id)) ended(id, agent);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  return {
    async handle(req, res, body, agent) {
      (req as IncomingMessage & { auth?: unknown }).auth = {
        token: '',
        clientId: agent,
        scopes: [],
      };
      const sessionHeader = req.headers['mcp-session-id'];
      const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
      if (sessionId) {
        const session = sessions.get(sessionId);
        // Another agent's session id is answered as unknown: knowing it grants nothing.
        if (!session || session.agent !== agent) {
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
      await openSession(req, res, body, agent);
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      unsubscribe();
      await Promise.all([...sessions.keys()].map(closeSession));
      await modern.close();
    },
  };
}
