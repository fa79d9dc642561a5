/**
 * The Node face of the SDK's web-standard MCP handlers, the way the SDK's
 * own `NodeStreamableHTTPServerTransport` serves one: `@hono/node-server`'s
 * request listener, whose `Request` is built lazily from the
 * `IncomingMessage` (headers read on demand, an abort signal that fires when
 * the response closes early) and whose response writer streams SSE with
 * backpressure. The body has been read (capped) and parsed by http-mcp.ts;
 * it goes to the SDK as `parsedBody`, so nothing is re-serialised into a
 * second `Request` body, as `toNodeHandler` would do for every request.
 *
 * A streamed answer's headers wait briefly for its first event (`HEADERS_HOLD_MS`).
 *
 * A handler that throws is answered as `toNodeHandler` answers it: a
 * JSON-RPC internal error (500) echoing the request's id, the error given
 * to `onerror` first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { AuthInfo } from '@modelcontextprotocol/server';

/** A web-standard MCP handler: `createMcpHandler(...).fetch` or a transport's `handleRequest`. */
export type WebMcpHandler = (
  request: Request,
  extra: { authInfo?: AuthInfo; parsedBody?: unknown },
) => Promise<Response>;

/** Serves one request: `body` is the parsed JSON-RPC message (undefined for GET and DELETE). */
export type NodeMcpHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
) => Promise<void>;

const BODY = Symbol('airlock.mcpBody');

type Incoming = IncomingMessage & { auth?: AuthInfo; [BODY]?: unknown };

/** The JSON-RPC id a 500 may echo: a single request's string or number id, else null. */
function echoableId(body: unknown): string | number | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (typeof method !== 'string') return null;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * How long a streamed answer's headers wait for its first event. The SDK
 * answers a POST with an SSE stream at once and the result follows when the
 * call is done; sent on their own, the headers cost a write (and a wake-up
 * of the client) of their own. Held this long, a call that answers within
 * it goes out in one write; a longer one sends them when the time is up.
 */
export const HEADERS_HOLD_MS = 10;

/** `flushHeaders` deferred by up to HEADERS_HOLD_MS: the first write sends them with it. */
function holdHeaders(res: ServerResponse) {
  const flush = res.flushHeaders.bind(res);
  let timer: NodeJS.Timeout | undefined;
  res.flushHeaders = () => {
    timer ??= setTimeout(() => {
      if (!res.writableEnded && !res.destroyed) flush();
    }, HEADERS_HOLD_MS);
  };
  const clear = () => clearTimeout(timer);
  res.once('finish', clear);
  res.once('close', clear);
}

export function nodeMcpHandler(
  handler: WebMcpHandler,
  onerror: (error: Error) => void,
): NodeMcpHandler {
  const listener = getRequestListener(
    async (request, env) => {
      const incoming = env.incoming as Incoming; // always a node:http request here
      const body = incoming[BODY];
      try {
        return await handler(request, {
          ...(incoming.auth !== undefined ? { authInfo: incoming.auth } : {}),
          ...(body !== undefined ? { parsedBody: body } : {}),
        });
      } catch (error) {
        try {
          onerror(error instanceof Error ? error : new Error(String(error)));
        } catch {
          // An observer's own failure does not change the answer.
        }
        return Response.json(
          {
            jsonrpc: '2.0',
            error: { code: -32603, message: 'Internal server error' },
            id: echoableId(body),
          },
          { status: 500 },
        );
      }
    },
    // The SDK's transports use the global Request/Response; a request without a Host is still served.
    { overrideGlobalObjects: false, hostname: 'localhost' },
  );
  return async (req, res, body) => {
    (req as Incoming)[BODY] = body;
    holdHeaders(res);
    await listener(req, res);
  };
}
