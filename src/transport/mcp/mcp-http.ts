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
 * that agent's least recently used), idle sessions closed after 10 minutes
 * (`sessionIdleMs`), and a revoked agent's sessions closed at once.
 *
 * Ending is everyone's job (authority.md §2, a clean inbox): each instance's
 * sweep ends its own idle sessions, drops its copy of a session another
 * instance ended (DELETE sent there: the record is gone), and ends stored
 * sessions nobody used for the idle time — an instance that held them died —
 * so their consent requests and grants end on every instance.
 *
 * Sessions are kept in the store too (mcp-session-records.ts): a request
 * for a session this instance does not hold — it was opened on another
 * instance, which may have died — rebuilds it here by replaying its
 * `initialize` to a fresh SDK transport with the same session id. Its
 * grants are the store's already. What does not move: resource
 * subscriptions and an open GET stream (the client reopens it).
 *
 * A 2026-era `subscriptions/listen` asking for task ids is served by
 * mcp-task-listen.ts (the SDK's listen router drops `taskIds`); both kinds
 * of listen get list changes from the SDK entry's bus, which the kernel's
 * `toolsChanged` feeds here.
 *
 * The body has already been read (capped) and parsed, and the agent
 * authenticated, by the HTTP app.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { nodeMcpHandler, type NodeMcpHandler } from './node-adapter.js';
import type { Server } from '@modelcontextprotocol/server';
import { sessionRecords } from './mcp-session-records.js';
import { createMcpServer, servedTools, type McpServing } from './mcp-server.js';
import type { ToolNames } from './tool-names.js';
import { createTaskListen } from './tasks/mcp-task-listen.js';
import type { Logger } from '../../kernel/logger.js';
import type { ServingKernel } from '../surface.js';
import { header, sendJson, sendJsonRpcError } from '../http/http-util.js';
import { HEADER_MISMATCH, paramHeaderMismatch } from './mcp-param-headers.js';
import { agentNameOf, isObject } from '../../kernel/index.js';

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
  /** Tool names, approval links and waits (mcp-server.ts). */
  serving?: McpServing;
}

export interface McpEndpoint {
  /** `agent` is the authenticated agent's key (name and id) the request acts as. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown, agent: string): Promise<void>;
  readonly sessionCount: number;
  close(): Promise<void>;
}

interface Session {
  agent: string;
  transport: WebStandardStreamableHTTPServerTransport;
  handle: NodeMcpHandler;
  server: Server;
  lastSeen: number;
  /** When the store last heard of a use (written at most every STORE_TOUCH_MS). */
  storedSeen: number;
  /** When this instance opened or continued it. */
  openedAt: number;
}

/** How often a session's use is written to the store (its idle clock on every instance). */
const STORE_TOUCH_MS = 30_000;

/** An endpoint's 2025-era sessions and what their life needs; built once per endpoint. */
interface SessionsContext {
  kernel: ServingKernel;
  logger: Logger;
  factory: () => Server;
  onerror: (error: Error) => void;
  /** Open here, by session id. */
  sessions: Map<string, Session>;
  records: ReturnType<typeof sessionRecords>;
  /** Sessions being continued from the store, by id. */
  restoring: Map<string, Promise<Session | null>>;
  idleMs: number;
  sweepMs: number;
  maxSessions: number;
  perAgent: number;
  storeTrouble: (err: unknown) => void;
}

/** Connection identity of an HTTP MCP request (spec/kernel.md §4): the session when there is one, else the principal. */
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
        agent: agentNameOf(principal!),
        session: sessionId,
      }
    : {
        id: `agent:${principal}`,
        kind: 'http-principal' as const,
        agent: agentNameOf(principal!),
      };

/** Sweeps idle sessions every `sweepMs` (one sweep at a time); the timer does not hold the process. */
function startSweep(ctx: SessionsContext): NodeJS.Timeout {
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    void sweepSessions(ctx)
      .catch(ctx.storeTrouble)
      .finally(() => (sweeping = false));
  }, ctx.sweepMs);
  sweep.unref();
  return sweep;
}

/** A revoked agent's open sessions end at once (its token already fails); answers the unsubscribe. */
function endRevokedSessions(ctx: SessionsContext): () => void {
  return ctx.kernel.events.subscribe(
    ({ data }) => {
      if (data.event !== 'agentsChanged' || data.change !== 'revoked') return;
      const revoked = data.key ?? data.agent;
      for (const [id, s] of ctx.sessions) if (s.agent === revoked) void closeSession(ctx, id);
    },
    { events: ['agentsChanged'] },
  );
}

const noSessionHeader = (res: ServerResponse, method: string | undefined) =>
  sendJsonRpcError(
    res,
    method === 'GET' || method === 'DELETE' ? 400 : 405,
    -32000,
    'Bad Request: send an Mcp-Session-Id header (2025-era) or POST a 2026-07-28 request.',
  );

const noValidSession = (res: ServerResponse) =>
  sendJsonRpcError(
    res,
    400,
    -32000,
    'Bad Request: no valid session; send initialize first (2025-era) or use the 2026-07-28 envelope.',
  );

const sessionNotFound = (res: ServerResponse) =>
  sendJsonRpcError(
    res,
    404,
    -32001,
    'Session not found; it expired or the server restarted. Initialize a new session.',
  );

/** A 2026-era `tools/call` whose `Mcp-Param-*` headers disagree with its arguments (SEP-2243), as the JSON-RPC error to answer. */
function customHeaderRefusal(
  { kernel, mounts, logger }: McpEndpointOptions,
  toolNames: ToolNames,
  req: IncomingMessage,
  body: unknown,
) {
  if (!isObject(body) || body.method !== 'tools/call' || !isObject(body.params)) return null;
  const { name, arguments: args } = body.params;
  if (typeof name !== 'string') return null;
  const tool = servedTools(kernel, mounts, toolNames).index.get(name)?.tool;
  if (!tool) return null;
  const refused = paramHeaderMismatch(tool.inputSchema, args, (h) => header(req, h));
  if (!refused) return null;
  logger.debug({ tool: name, mismatch: refused.data.mismatch }, 'mcp request rejected');
  return {
    jsonrpc: '2.0',
    id: body.id ?? null,
    error: { code: HEADER_MISMATCH, message: refused.message, data: refused.data },
  };
}

/**
 * What `isLegacyRequest` reads of a request whose body is already parsed:
 * its method and the MCP routing headers (a bodiless copy; the body goes as
 * `parsedBody`).
 */
function classifiable(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const name of ['mcp-protocol-version', 'mcp-method', 'mcp-name']) {
    const value = header(req, name);
    if (value !== undefined) headers.set(name, value);
  }
  return new Request('http://airlock.invalid/mcp', { method: req.method ?? 'POST', headers });
}

async function sweepSessions(ctx: SessionsContext) {
  const { sessions, records, restoring, idleMs, sweepMs } = ctx;
  const now = Date.now();
  const cutoff = now - idleMs;
  for (const [id, s] of sessions) if (s.lastSeen < cutoff) await closeIdle(ctx, id, cutoff);
  const stored = await records.list();
  for (const [id, s] of sessions)
    if (!stored.has(id) && s.openedAt < now - sweepMs && !restoring.has(id))
      await dropLocal(ctx, id);
  for (const [id, s] of stored)
    if (s.lastSeen < cutoff && !sessions.has(id) && !restoring.has(id)) {
      ended(ctx, id, s.agent);
      await records.remove(id);
    }
}

/** Idle here; it ends (grants too) only when no instance has used it lately. */
async function closeIdle(ctx: SessionsContext, id: string, cutoff: number) {
  const stored = await ctx.records.load(id).catch(() => null);
  if (stored && stored.lastSeen >= cutoff) await dropLocal(ctx, id);
  else await closeSession(ctx, id);
}

/** Closes this instance's copy of a session that lives on elsewhere. */
async function dropLocal({ sessions }: SessionsContext, id: string) {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  await s.transport.close().catch(() => undefined);
  await s.server.close().catch(() => undefined);
}

/** A session's pending approvals and grants end with it (authority.md §2). */
const ended = ({ kernel, logger }: SessionsContext, id: string, agent: string) =>
  void kernel.consent
    .endConnection(`agent:${agent}/session:${id}`)
    .catch((err: unknown) => logger.warn({ err }, 'could not end the session’s approvals'));

/** Ends a session everywhere: its approvals and grants, and its record. */
async function closeSession(ctx: SessionsContext, id: string) {
  const { sessions, records } = ctx;
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  ended(ctx, id, s.agent);
  await records.remove(id).catch(ctx.storeTrouble);
  await s.transport.close().catch(() => undefined);
  await s.server.close().catch(() => undefined);
}

/** Makes room for one more session of `agent`: its least recently used goes past the cap. */
async function makeRoom(ctx: SessionsContext, agent: string) {
  const { sessions, perAgent } = ctx;
  const own = [...sessions].filter(([, s]) => s.agent === agent);
  if (own.length < perAgent) return;
  own.sort(([, a], [, b]) => a.lastSeen - b.lastSeen);
  await Promise.all(own.slice(0, own.length - perAgent + 1).map(([id]) => closeSession(ctx, id)));
}

async function openSession(
  ctx: SessionsContext,
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  agent: string,
) {
  await makeRoom(ctx, agent);
  const { maxSessions } = ctx;
  if (ctx.sessions.size >= maxSessions) {
    sendJsonRpcError(
      res,
      503,
      -32000,
      `Too many open MCP sessions (${maxSessions}); close idle clients and retry.`,
    );
    return;
  }
  const { handle } = await build(ctx, agent, randomUUID(), body as Record<string, unknown>);
  await handle(req, res, body);
}

/**
 * A server and SDK transport for one session id. `init` is the session's
 * `initialize` request: kept in the store once the session is initialized.
 */
async function build(
  ctx: SessionsContext,
  agent: string,
  id: string,
  init: Record<string, unknown>,
) {
  const { sessions, records, storeTrouble, onerror } = ctx;
  const server = ctx.factory();
  const transport: WebStandardStreamableHTTPServerTransport =
    new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      onsessioninitialized: async (sid) => {
        const at = Date.now();
        sessions.set(sid, {
          agent,
          transport,
          handle,
          server,
          lastSeen: at,
          storedSeen: at,
          openedAt: at,
        });
        await records.save(sid, { agent, init, createdAt: at, lastSeen: at }).catch(storeTrouble);
      },
      onsessionclosed: async (sid) => {
        if (!sessions.delete(sid)) return;
        ended(ctx, sid, agent);
        await records.remove(sid).catch(storeTrouble);
      },
    });
  const handle = nodeMcpHandler((request, opts) => transport.handleRequest(request, opts), onerror);
  await server.connect(transport);
  return { server, transport, handle };
}

/**
 * Rebuilds a session another instance opened: the same id, its
 * `initialize` replayed (the response is discarded) and the client's
 * `initialized` notification, so the SDK serves it as its own.
 */
function restore(ctx: SessionsContext, id: string, agent: string): Promise<Session | null> {
  const { sessions, records, restoring, idleMs, maxSessions, logger } = ctx;
  let pending = restoring.get(id);
  if (!pending) {
    pending = (async () => {
      const stored = await records.load(id);
      if (!stored || stored.agent !== agent) return null;
      if (stored.lastSeen < Date.now() - idleMs) return null;
      await makeRoom(ctx, agent);
      if (sessions.size >= maxSessions) return null;
      const { transport, server } = await build(ctx, agent, id, stored.init);
      const authInfo = { token: '', clientId: agent, scopes: [] };
      const version = (stored.init.params as { protocolVersion?: unknown } | undefined)
        ?.protocolVersion;
      const replay = async (message: Record<string, unknown>, headers: Record<string, string>) => {
        const response = await transport.handleRequest(
          new Request('http://airlock.invalid/mcp', {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...headers,
            },
            body: JSON.stringify(message),
          }),
          { parsedBody: message, authInfo },
        );
        await response.text();
        return response.ok;
      };
      const ok =
        (await replay(stored.init, {})) &&
        (await replay(
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          {
            'mcp-session-id': id,
            ...(typeof version === 'string' ? { 'mcp-protocol-version': version } : {}),
          },
        ));
      const session = sessions.get(id);
      if (!ok || !session) {
        sessions.delete(id);
        await transport.close().catch(() => undefined);
        await server.close().catch(() => undefined);
        return null;
      }
      logger.info({ session: id, agent }, 'MCP session continued from the store');
      return session;
    })().finally(() => restoring.delete(id));
    restoring.set(id, pending);
  }
  return pending;
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const { kernel, mounts, logger } = options;
  const idleMs = options.sessionIdleMs ?? 10 * 60 * 1000;
  // Another instance reads the stored use as the idle clock: it must lag well behind idleMs.
  const touchMs = Math.min(STORE_TOUCH_MS, Math.floor(idleMs / 4));
  const serving = options.serving ?? {};
  const toolNames = serving.toolNames ?? 'exact';
  const factory = () => createMcpServer({ ...serving, kernel, mounts, identify });
  const onerror = (error: Error) => logger.debug({ err: error.message }, 'mcp request rejected');
  const ctx: SessionsContext = {
    kernel,
    logger,
    factory,
    onerror,
    sessions: new Map(),
    records: sessionRecords(kernel.store),
    restoring: new Map(),
    idleMs,
    sweepMs: Math.min(idleMs, 60_000),
    maxSessions: options.maxSessions ?? 1000,
    perAgent: options.maxSessionsPerAgent ?? 64,
    storeTrouble: (err: unknown) =>
      logger.warn({ err }, 'could not keep the MCP session in the store'),
  };
  const { sessions, records, storeTrouble } = ctx;
  const modern = createMcpHandler(factory, {
    legacy: 'reject',
    onerror,
    maxRequestBodySize: options.maxBodyBytes,
  });
  const modernNode = nodeMcpHandler((request, opts) => modern.fetch(request, opts), onerror);
  // The SDK's listen streams learn of list changes from its bus: a door's
  // tools changing (on any instance, over the kernel bus) is published there.
  const unfeed = kernel.events.subscribe(
    ({ data }) => {
      if (data.event === 'toolsChanged' && mounts.includes(String(data.door)))
        modern.notify.toolsChanged();
    },
    { events: ['toolsChanged'] },
  );
  const taskListen = createTaskListen({
    kernel,
    bus: modern.bus,
    logger,
    capabilities() {
      const server = factory();
      const capabilities = server.getCapabilities();
      void server.close().catch(() => undefined);
      return capabilities;
    },
  });

  const sweep = startSweep(ctx);
  const unsubscribe = endRevokedSessions(ctx);

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
        let session = sessions.get(sessionId);
        if (!session)
          session =
            (await restore(ctx, sessionId, agent).catch((err: unknown) => {
              logger.warn({ err }, 'could not continue the MCP session from the store');
              return null;
            })) ?? undefined;
        // Another agent's session id is answered as unknown: knowing it grants nothing.
        if (!session || session.agent !== agent) return sessionNotFound(res);
        session.lastSeen = Date.now();
        if (session.lastSeen - session.storedSeen > touchMs) {
          session.storedSeen = session.lastSeen;
          void records.touch(sessionId, session.lastSeen).catch(storeTrouble);
        }
        await session.handle(req, res, body);
        return;
      }
      if (req.method !== 'POST') return noSessionHeader(res, req.method);
      const legacy = await isLegacyRequest(classifiable(req), body);
      if (!legacy) {
        const refused = customHeaderRefusal(options, toolNames, req, body);
        if (refused) {
          sendJson(res, 400, refused);
          return;
        }
        if (taskListen.claims(req, body)) {
          await taskListen.serve(req, res, body, agent);
          return;
        }
        await modernNode(req, res, body);
        return;
      }
      const isInitialize =
        typeof body === 'object' &&
        body !== null &&
        (body as { method?: unknown }).method === 'initialize';
      if (!isInitialize) return noValidSession(res);
      await openSession(ctx, req, res, body, agent);
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      unsubscribe();
      unfeed();
      taskListen.close();
      // Sessions outlive this instance: the store keeps them for the others (or its restart).
      await Promise.all([...sessions.keys()].map((id) => dropLocal(ctx, id)));
      await modern.close();
    },
  };
}
