/**
 * The workspace's one HTTP server: MCP at `/mcp` (all doors) and
 * `/mcp/<door>`, REST at `/api/v1`, SSE at `/api/v1/events`, `/healthz`,
 * the doors' static files and the web UI at `/`. Guards run first
 * (Host/Origin, bearer token); bodies are capped before parsing; a handler's
 * throw becomes a 500 with a log id and never takes the server down.
 */
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../kernel/logger.js';
import { failure, internalFailure } from '../../kernel/errors.js';
import { kernelRoutes } from '../rest/rest-kernel.js';
import { createRestDispatch, type RestDispatch } from './http-rest.js';
import { createMcpDispatch, type McpDispatch } from '../mcp/http-mcp.js';
import type { McpServing } from '../mcp/mcp-server.js';
import type { McpRequestTracer } from '../mcp/mcp-trace.js';
import { checkHostAndOrigin, type GuardOptions } from './guards.js';
import { admit, agentKeyOfCaller, identifyCaller, type AuthOptions, type Caller } from '../auth.js';
import { sessionRoutes } from '../rest/rest-session.js';
import { BodyTooLargeError, sendJson, sendJsonRpcError } from './http-util.js';
import { sendFailure } from './http-errors.js';
import { agentView, serveEvents } from './sse.js';
import { openApiDocument } from '../rest/openapi-doc.js';
import type { RestRoute, ServedDoor, ServingKernel } from '../surface.js';
import type { Passkeys } from '../rest/passkeys.js';
import { passkeyRoutes } from '../rest/rest-passkeys.js';
import { mountOf } from '../../kernel/kernel.js';
import type { OAuthServer } from '../oauth/server.js';
import { oauthRoutes } from '../oauth/routes.js';
import { notifySettingsRoutes, type NotifyControl } from '../rest/rest-notify.js';

export interface HttpAppOptions {
  kernel: ServingKernel;
  logger: Logger;
  /**
   * Admit MCP and agent-route requests without a credential as the agent
   * `anonymous` (authority.md §1; loopback binds only — the CLI refuses it
   * elsewhere). Default false: every agent needs its token.
   */
  allowAnonymous?: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Cap on any request body, checked before parsing (default 4 MiB). */
  maxBodyBytes?: number;
  /** How MCP is served beyond the mounts: tool names, approval links and waits. */
  mcp?: McpServing;
  keepAliveMs?: number;
  /** The request's headers must arrive within this (default 10 s, authority.md §4). */
  headersTimeoutMs?: number;
  /** The whole request (headers and body) must arrive within this (default 60 s). */
  requestTimeoutMs?: number;
  /**
   * Open connections one remote address may hold (default 512); the next is
   * answered 503 and closed, so one client cannot exhaust the server's sockets.
   */
  maxConnectionsPerAddress?: number;
  /** An idle 2025-era MCP session ends after this long (default 10 min), its consent requests and grants with it. */
  sessionIdleMs?: number;
  /** The owner's passkeys (issue 25): enrolment, sign-in and decision challenges; none: no passkey routes. */
  passkeys?: Passkeys;
  /** A server span per MCP request (telemetry/tracing.ts); none by default. */
  tracer?: McpRequestTracer | undefined;
  /** The Prometheus text of the metrics (telemetry/metrics.ts): `GET /metrics`, owner-only. */
  metrics?: (() => Promise<string>) | undefined;
  /**
   * Airlock as OAuth authorization and resource server for remote MCP
   * clients (authority.md §7); none: agent tokens only, and the OAuth
   * discovery paths answer 404 with the token hint.
   */
  oauth?: OAuthServer | undefined;
  /** The notifications' settings and test sends (authority.md §6.3); none: config `{}`, no notifier. */
  notify?: NotifyControl | undefined;
  /** Serves the web UI and other static pages; returns false when it did not handle the request. */
  staticHandler?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

export interface HttpApp {
  readonly server: HttpServer;
  /** Open MCP sessions by protocol era (metrics). */
  sessions(): Record<string, number>;
  listen(port: number, host: string): Promise<AddressInfo>;
  close(): Promise<void>;
}

const isMcpPath = (path: string) => path === '/mcp' || path.startsWith('/mcp/');

/** What an MCP client without a token must do, in words every client shows (RFC 6750 allows no quotes or backslashes). */
const TOKEN_HINT =
  'Airlock takes agent tokens, not OAuth: the owner creates one with "airlock agents add NAME" and the client sends it as Authorization: Bearer <token>.';
const MCP_CHALLENGE = `Bearer realm="airlock", error_description="${TOKEN_HINT.replace(/"/g, "'")}"`;
/** The hint beside an OAuth challenge, for clients that cannot do OAuth. */
const TOKEN_HINT_OAUTH =
  "Connect with OAuth (the owner approves the client in Airlock's web UI), or send an agent token the owner creates with airlock agents add NAME as Authorization: Bearer <token>.";
/** Where OAuth clients look for an authorization server or register themselves (RFC 8414, 9728, 7591). */
const isOAuthProbe = (path: string) =>
  path === '/register' ||
  path === '/authorize' ||
  path === '/token' ||
  /^\/\.well-known\/(oauth-authorization-server|openid-configuration|oauth-protected-resource)(\/|$)/.test(
    path,
  );

/** What the request handlers share; built once by `createHttpApp`. */
interface AppContext {
  kernel: ServingKernel;
  logger: Logger;
  options: HttpAppOptions;
  served: readonly ServedDoor[];
  oauth: OAuthServer | undefined;
  auth: AuthOptions;
  guard: GuardOptions;
  rest: RestDispatch;
  mcp: McpDispatch;
}

/**
 * The SSE `snapshot` frame: running jobs plus what each door adds, as
 * `agent` may see them (its own jobs; null: the owner, everything).
 */
async function snapshot({ kernel, served }: AppContext, agent: string | null) {
  const jobs = await kernel.jobs.seenBy(agent).list({ status: ['queued', 'running'] });
  const extra = await Promise.all(
    served.map((d) => d.http?.snapshot?.({ agent }) ?? Promise.resolve({})),
  );
  return Object.assign({ jobs }, ...extra);
}

/** The event stream and the route list are for agents and the owner alike (authority.md §1). */
async function handleApi(
  ctx: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  caller: Caller | null,
) {
  const { kernel, rest, auth, options } = ctx;
  // `GET /events` is the Koharu seed's stream: the same events, each frame named.
  const koharuWire = url.pathname === '/events';
  const sub = koharuWire ? 'events' : url.pathname.slice('/api/v1/'.length);
  const builtIn = req.method === 'GET' && (sub === 'events' || sub === 'openapi.json');
  if (!builtIn) return rest.handle(req, res, url, sub, caller);
  // EventSource cannot send the session header: a single-use ticket names the session.
  const ticket = sub === 'events' && !caller ? url.searchParams.get('ticket') : null;
  if (ticket) {
    const session = await kernel.principals.redeemStreamTicket(ticket);
    if (session) caller = { kind: 'owner', via: 'session', session };
  }
  const refused = admit(req, 'agent', caller);
  if (refused) return refuse(res, refused);
  if (sub === 'events') {
    // An agent's stream carries its own calls, approvals and jobs, never another's or the owner's inbox.
    // Its key (name and id): a later agent of the same name is another agent.
    const agent = agentKeyOfCaller(caller!);
    await serveEvents(req, res, {
      bus: kernel.events,
      snapshot: () => snapshot(ctx, agent),
      ...(agent ? { view: agentView(agent) } : {}),
      named: koharuWire,
      // The owner's streams check their credential every second as well (a CLI rotate publishes nowhere).
      ...(caller!.kind === 'owner' ? { recheckMs: 1000 } : {}),
      // The same request, identified again: still this caller, still admitted?
      stillAllowed: async () => {
        if (ticket && caller!.kind === 'owner' && caller!.via === 'session')
          return (await kernel.principals.ownerSession(caller!.session.id)) !== null;
        const now = await identifyCaller(req, auth);
        return !!now && !('ok' in now) && now.kind === caller!.kind && !admit(req, 'agent', now);
      },
      ...(options.keepAliveMs ? { keepAliveMs: options.keepAliveMs } : {}),
    });
  } else sendJson(res, 200, openApiDocument(rest.routes()));
}

/** MCP is for agents: a caller with no credential gets 401, the owner's token 403. */
async function handleMcp(
  { oauth, mcp }: AppContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  caller: Caller | null,
) {
  const agent = caller ? agentKeyOfCaller(caller) : null;
  if (!caller || !agent) {
    const refused =
      caller?.kind === 'owner'
        ? 'The owner’s credential is not an agent’s: give each MCP client its own agent token (`airlock agents add NAME`).'
        : oauth
          ? 'No credential. Connect with OAuth (the owner approves the client in Airlock’s web UI), or send Authorization: Bearer <agent token> (`airlock agents add NAME`).'
          : 'No agent token. Send Authorization: Bearer <agent token>; the owner creates one with `airlock agents add NAME` (airlock serve prints the default agent’s client configuration).';
    if (!caller)
      res.setHeader('www-authenticate', oauth ? oauthChallenge(oauth, path) : MCP_CHALLENGE);
    sendJsonRpcError(res, caller ? 403 : 401, -32001, refused);
    return;
  }
  await mcp.handle(req, res, path, agent);
}

/** A door's static file (e.g. the page bridge), if one serves this path. */
async function serveDoorFile(
  served: readonly ServedDoor[],
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  for (const door of served) {
    const file = await door.http?.serveStatic?.(path);
    if (!file) continue;
    res.writeHead(200, {
      'content-type': file.contentType,
      'content-length': String(file.bytes.byteLength),
      'cache-control': 'no-cache',
    });
    res.end(req.method === 'HEAD' ? undefined : file.bytes);
    return true;
  }
  return false;
}

/** OAuth discovery first; the token hint stays for clients that cannot do OAuth. */
const oauthChallenge = (oauth: OAuthServer, path: string, error?: string) =>
  `${oauth.challenge(path, error)}, error_description="${TOKEN_HINT_OAUTH}"`;

/** The OAuth paths: metadata and the authorization server's endpoints (public; Host still checked). */
async function handleOAuth(
  oauth: OAuthServer | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
) {
  if (!oauth) return false;
  if (oauth.owns(path)) {
    await oauth.handle(req, res);
    return true;
  }
  const metadata = req.method === 'GET' ? oauth.protectedResource(path) : null;
  if (!metadata) return false;
  res.setHeader('access-control-allow-origin', '*');
  sendJson(res, 200, metadata);
  return true;
}

/** One request: health, guards, metrics, MCP and the API, OAuth, door files, then the web UI. */
async function handleRequest(ctx: AppContext, req: IncomingMessage, res: ServerResponse) {
  const { kernel, options, served, oauth, auth, guard } = ctx;
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (path === '/healthz') {
    sendJson(res, 200, { status: 'ok', doors: served.map(mountOf), store: kernel.store.kind });
    return;
  }
  // OAuth clients in a browser (the Inspector) call these from their own origin.
  const oauthPath = !!oauth && (oauth.owns(path) || path.startsWith('/.well-known/'));
  const guarded = checkHostAndOrigin(req, guard, { ignoreOrigin: oauthPath });
  if (!guarded.ok) {
    if (isMcpPath(path)) sendJsonRpcError(res, guarded.status, -32000, guarded.message);
    else sendFailure(res, failure('notAuthorized', guarded.message), guarded.status);
    return;
  }
  if (path === '/metrics' && options.metrics) {
    const caller = await identifyCaller(req, auth);
    const refused =
      caller && 'ok' in caller
        ? { failure: caller, status: 401 as const }
        : admit(req, 'owner', caller);
    if (refused) return refuse(res, refused);
    await sendMetrics(res, options.metrics);
    return;
  }
  const koharuEvents = path === '/events' && req.method === 'GET';
  if (isMcpPath(path) || path.startsWith('/api/v1/') || koharuEvents) {
    const caller = await identifyCaller(req, auth);
    if (caller && 'ok' in caller) {
      res.setHeader(
        'www-authenticate',
        oauth && isMcpPath(path)
          ? oauthChallenge(oauth, path, 'invalid_token')
          : 'Bearer realm="airlock", error="invalid_token"',
      );
      if (isMcpPath(path)) sendJsonRpcError(res, 401, -32001, caller.message);
      else sendFailure(res, caller, 401);
      return;
    }
    if (isMcpPath(path)) await handleMcp(ctx, req, res, path, caller);
    else await handleApi(ctx, req, res, url, caller);
    return;
  }
  if (await handleOAuth(oauth, req, res, path)) return;
  if (isOAuthProbe(path)) {
    // No OAuth here (yet): a client that tries it (mcp-remote, the Inspector) shows this body's words.
    sendJson(res, 404, {
      status: 404,
      code: 'notFound',
      message: TOKEN_HINT,
      error: 'oauth_not_supported',
      error_description: TOKEN_HINT,
    });
    return;
  }
  if (await serveDoorFile(served, req, res, path)) return;
  if (options.staticHandler && (await options.staticHandler(req, res))) return;
  sendFailure(
    res,
    failure('notFound', `Nothing at ${path}; use /mcp for MCP and /api/v1 for the REST API.`),
  );
}

function refuse(res: ServerResponse, refused: NonNullable<ReturnType<typeof admit>>) {
  if (refused.status === 401) res.setHeader('www-authenticate', 'Bearer realm="airlock"');
  sendFailure(res, refused.failure, refused.status);
}

/** An MCP client gets every error as JSON-RPC, an unexpected one included (with its log id). */
function fail({ logger }: AppContext, req: IncomingMessage, res: ServerResponse, error: unknown) {
  const mcpRequest = isMcpPath((req.url ?? '').split('?')[0]!);
  if (error instanceof BodyTooLargeError) {
    const message = `Request body too large: at most ${error.max} bytes are accepted.`;
    if (mcpRequest) sendJsonRpcError(res, 413, -32600, message);
    else sendFailure(res, failure('requestTooLarge', message));
    return;
  }
  const internal = internalFailure();
  logger.error({ err: error, logId: internal.data?.logId, url: req.url }, 'request failed');
  if (res.headersSent) res.end();
  else if (mcpRequest) sendJsonRpcError(res, 500, -32603, internal.message);
  else sendFailure(res, internal);
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { kernel, logger } = options;
  const served = kernel.doors();
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const guard: GuardOptions = {
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
  };
  const { oauth } = options;
  const auth: AuthOptions = {
    principals: kernel.principals,
    allowAnonymous: options.allowAnonymous ?? false,
    // An OAuth access token is good on the MCP endpoint it was issued for, nowhere else.
    ...(oauth
      ? {
          accessToken: async (token: string, req: IncomingMessage) => {
            const path = (req.url ?? '/').split('?')[0]!;
            return isMcpPath(path) ? oauth.authenticate(token, path) : null;
          },
        }
      : {}),
  };
  const routes: RestRoute[] = [
    ...kernelRoutes(kernel),
    ...notifySettingsRoutes(kernel, options.notify ?? { config: {} }),
    ...sessionRoutes(kernel.principals),
    ...served.flatMap((d) => d.http?.routes ?? []),
  ];
  if (options.passkeys) routes.push(...passkeyRoutes(kernel, options.passkeys, () => routes));
  if (oauth) routes.push(...oauthRoutes(oauth));
  const rest = createRestDispatch({
    routes,
    logger,
    maxBodyBytes,
    presence: kernel.presence,
  });
  const mcp = createMcpDispatch({
    kernel,
    logger,
    maxBodyBytes,
    ...(options.mcp ? { serving: options.mcp } : {}),
    ...(options.tracer ? { tracer: options.tracer } : {}),
    ...(options.sessionIdleMs ? { sessionIdleMs: options.sessionIdleMs } : {}),
  });

  const ctx: AppContext = { kernel, logger, options, served, oauth, auth, guard, rest, mcp };

  // A slow client cannot hold a connection open for nothing (authority.md §4):
  // headers within 10 s, the whole request within 60 s, checked every second
  // (Node's default check runs every 30 s, which let slow headers live 40 s).
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const requestTimeout = Math.max(options.requestTimeoutMs ?? 60_000, headersTimeout);
  const server = createServer(
    { connectionsCheckingInterval: Math.min(1000, Math.max(100, headersTimeout / 2)) },
    (req, res) => {
      handleRequest(ctx, req, res).catch((error: unknown) => fail(ctx, req, res, error));
    },
  );
  server.headersTimeout = headersTimeout;
  server.requestTimeout = requestTimeout;
  limitConnectionsPerAddress(server, options.maxConnectionsPerAddress ?? 512, logger);

  return {
    server,
    // The 2026-07-28 era is stateless: each request is its own connection, no session.
    sessions: () => ({ '2025': mcp.sessionCount() }),
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async close() {
      await mcp.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      });
    },
  };
}

/**
 * Caps the connections one remote address holds open: the one over the cap
 * gets a one-line 503 (`Retry-After: 1`) and is closed before any request is
 * read.
 */
function limitConnectionsPerAddress(server: HttpServer, max: number, logger: Logger): void {
  const open = new Map<string, number>();
  let warned = 0;
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      if (Date.now() - warned > 60_000) {
        warned = Date.now();
        logger.warn(
          { address, max },
          'connection refused: too many open connections from one address',
        );
      }
      const body = JSON.stringify({
        status: 503,
        code: 'busy',
        message: `This address already holds ${max} open connections; close some (or reuse them with keep-alive), then retry.`,
      });
      socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** Prometheus text exposition format 0.0.4. */
export async function sendMetrics(res: ServerResponse, metrics: () => Promise<string>) {
  const text = await metrics();
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  res.end(text);
}
