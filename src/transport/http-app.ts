/**
 * The workspace's one HTTP server: MCP at `/mcp` (all doors) and
 * `/mcp/<door>`, REST at `/api/v1`, SSE at `/api/v1/events`, `/healthz`,
 * and the web UI at `/`. Guards run first (Host/Origin, bearer token);
 * bodies are capped before parsing; a handler's throw becomes a 500 with a
 * log id and never takes the server down.
 */
import {
  createServer,
  type IncomingMessage,
  type Server as HttpServer,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Kernel } from '../kernel/kernel.js';
import type { Logger } from '../kernel/logger.js';
import type { RestRoute } from '../kernel/door.js';
import { createRouter } from './router.js';
import { kernelRoutes } from './rest-kernel.js';
import { createMcpEndpoint, type McpEndpoint } from './mcp-http.js';
import { checkBearer, checkHostAndOrigin, type GuardOptions } from './guards.js';
import { BodyTooLargeError, readBody, sendError, sendJson, sendJsonRpcError } from './http-util.js';
import { serveEvents } from './sse.js';
import { openApiDocument } from './openapi-doc.js';
import { mountOf } from '../kernel/kernel.js';

export interface HttpAppOptions {
  kernel: Kernel;
  logger: Logger;
  token?: string | undefined;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** Cap on any request body, checked before parsing (default 4 MiB). */
  maxBodyBytes?: number;
  keepAliveMs?: number;
  /** Serves the web UI and other static pages; returns false when it did not handle the request. */
  staticHandler?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

export interface HttpApp {
  readonly server: HttpServer;
  listen(port: number, host: string): Promise<AddressInfo>;
  close(): Promise<void>;
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { kernel, logger } = options;
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const guard: GuardOptions = {
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
    token: options.token,
  };
  const router = createRouter();
  const allRoutes: RestRoute[] = [
    ...kernelRoutes(kernel),
    ...kernel.doors().flatMap((d) => d.routes ?? []),
  ];
  for (const route of allRoutes) router.add(route);

  const mounts = kernel.doors().map(mountOf);
  const endpoints = new Map<string, McpEndpoint>();
  const endpoint = (key: string, ms: string[]) => {
    let e = endpoints.get(key);
    if (!e) {
      e = createMcpEndpoint({ kernel, mounts: ms, logger, maxBodyBytes: maxBody });
      endpoints.set(key, e);
    }
    return e;
  };

  const snapshot = async () => {
    const jobs = await kernel.jobs.list({ status: ['queued', 'running'] });
    const extra = await Promise.all(
      kernel.doors().map((d) => d.snapshot?.() ?? Promise.resolve({})),
    );
    return Object.assign({ jobs }, ...extra);
  };

  async function handleMcp(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    principal: string,
  ) {
    const mount = path === '/mcp' ? null : decodeURIComponent(path.slice('/mcp/'.length));
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
      const bytes = await readBody(req, maxBody);
      try {
        body = JSON.parse(bytes.toString('utf8'));
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
    await e.handle(req, res, body, principal === 'local' ? undefined : principal);
  }

  async function handleRest(req: IncomingMessage, res: ServerResponse, url: URL) {
    const sub = url.pathname.slice('/api/v1/'.length);
    if (sub === 'events' && req.method === 'GET') {
      await serveEvents(req, res, {
        bus: kernel.events,
        snapshot,
        ...(options.keepAliveMs ? { keepAliveMs: options.keepAliveMs } : {}),
      });
      return;
    }
    if (sub === 'openapi.json' && req.method === 'GET') {
      sendJson(res, 200, openApiDocument(router.routes()));
      return;
    }
    const m = router.match(req.method ?? 'GET', sub);
    if (!m.route) {
      const status = 'pathExists' in m && m.pathExists ? 405 : 404;
      sendError(
        res,
        status,
        status === 405 ? 'methodNotAllowed' : 'notFound',
        status === 405
          ? `${req.method} is not supported on /api/v1/${sub}; see GET /api/v1/openapi.json.`
          : `No route /api/v1/${sub}; see GET /api/v1/openapi.json for the routes.`,
      );
      return;
    }
    let body: unknown;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const bytes = await readBody(req, m.route.maxBodyBytes ?? maxBody);
      const type = req.headers['content-type'] ?? '';
      if (bytes.length === 0) body = undefined;
      else if (type.includes('json')) {
        try {
          body = JSON.parse(bytes.toString('utf8'));
        } catch {
          sendError(
            res,
            400,
            'malformedRequest',
            'The request body is not valid JSON; fix it and retry.',
          );
          return;
        }
      } else body = bytes;
    }
    const out = await m.route.handler({
      params: m.params,
      query: url.searchParams,
      body,
      headers: req.headers,
    });
    if (out.raw) {
      res.writeHead(out.status, {
        'content-type': out.raw.contentType,
        'content-length': String(out.raw.bytes.byteLength),
        ...(out.raw.filename
          ? { 'content-disposition': `attachment; filename="${out.raw.filename}"` }
          : {}),
      });
      res.end(out.raw.bytes);
    } else if (out.body === undefined) {
      res.writeHead(out.status).end();
    } else sendJson(res, out.status, out.body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    if (path === '/healthz') {
      sendJson(res, 200, { status: 'ok', doors: mounts, store: kernel.store.kind });
      return;
    }
    const guarded = checkHostAndOrigin(req, guard);
    if (!guarded.ok) {
      if (path.startsWith('/mcp')) sendJsonRpcError(res, guarded.status, -32000, guarded.message);
      else sendError(res, guarded.status, guarded.code, guarded.message);
      return;
    }
    const isMcp = path === '/mcp' || path.startsWith('/mcp/');
    if (isMcp || path.startsWith('/api/v1/')) {
      const principal = checkBearer(req, options.token);
      if (!principal) {
        const msg =
          'Missing or wrong bearer token; send Authorization: Bearer <token> (the token given with --token or AIRLOCK_TOKEN).';
        res.setHeader('www-authenticate', 'Bearer realm="airlock"');
        if (isMcp) sendJsonRpcError(res, 401, -32001, msg);
        else sendError(res, 401, 'unauthorized', msg);
        return;
      }
      if (isMcp) await handleMcp(req, res, path, principal);
      else await handleRest(req, res, url);
      return;
    }
    if (req.method === 'GET' || req.method === 'HEAD') {
      for (const door of kernel.doors()) {
        const file = await door.serveStatic?.(path);
        if (file) {
          res.writeHead(200, {
            'content-type': file.contentType,
            'content-length': String(file.bytes.byteLength),
            'cache-control': 'no-cache',
          });
          res.end(req.method === 'HEAD' ? undefined : file.bytes);
          return;
        }
      }
    }
    if (options.staticHandler && (await options.staticHandler(req, res))) return;
    sendError(res, 404, 'notFound', `Nothing at ${path}; MCP is at /mcp, the REST API at /api/v1.`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (error instanceof BodyTooLargeError) {
        if (req.url?.startsWith('/mcp'))
          sendJsonRpcError(
            res,
            413,
            -32600,
            `Request body too large: at most ${error.max} bytes are accepted.`,
          );
        else
          sendError(
            res,
            413,
            'requestTooLarge',
            `Request body too large: at most ${error.max} bytes are accepted.`,
          );
        return;
      }
      const logId = randomUUID();
      logger.error({ err: error, logId, url: req.url }, 'request failed');
      if (!res.headersSent)
        sendError(
          res,
          500,
          'internal',
          `Internal error (log id ${logId}); report it to the server operator.`,
          { logId },
        );
      else res.end();
    });
  });

  return {
    server,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    async close() {
      await Promise.all([...endpoints.values()].map((e) => e.close()));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 2000).unref();
      });
    },
  };
}
