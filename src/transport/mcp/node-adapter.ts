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
 * A streamed answer is gathered briefly (`HEADERS_HOLD_MS`): one that ends
 * by then is sent whole, with a content-length, in one write.
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
 * How long a streamed (SSE) answer is gathered before it is sent. The SDK
 * answers a POST with an event stream at once and the call's result follows
 * when the call is done. An answer whose stream ends within this time goes
 * out whole: one write, with a content-length, as the SDK's own Node
 * transport sends a handler that answers within a tick (a chunked stream
 * costs the server a stream pump and the client a chunked parse). One still
 * open after it is sent as a stream: the events gathered so far, then the
 * rest as they come, its headers at once (the client learns the stream is
 * open; an approval wait keeps it open for minutes).
 */
export const HEADERS_HOLD_MS = 10;

const EVENT_STREAM = /^text\/event-stream\b/i;

type Read = ReadableStreamReadResult<Uint8Array>;

/** A stream's first events, read for up to `holdMs`: `done` when it ended; else the read still pending. */
async function gather(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  holdMs: number,
): Promise<{ chunks: Uint8Array[]; pending: Promise<Read> | null }> {
  const chunks: Uint8Array[] = [];
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<null>((resolve) => {
    timer = setTimeout(resolve, holdMs, null);
  });
  try {
    for (;;) {
      const pending = reader.read();
      const read = await Promise.race([pending, expired]);
      if (read === null) return { chunks, pending };
      if (read.done) return { chunks, pending: null };
      chunks.push(read.value);
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The rest of a stream after `gather`: its gathered events, the pending read's, then the reader's. */
function resumed(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  chunks: Uint8Array[],
  pending: Promise<Read>,
): ReadableStream<Uint8Array> {
  let next: Promise<Read> | null = pending;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
    },
    async pull(controller) {
      const read = await (next ?? reader.read());
      next = null;
      if (read.done) controller.close();
      else controller.enqueue(read.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * What the listener is given for a response written here: @hono/node-server
 * writes nothing for a bodiless response with this marker header (its own
 * RESPONSE_ALREADY_SENT). It reads only the headers, so one serves all.
 */
const ALREADY_SENT = new Response(null, { headers: { 'x-hono-already-sent': 'true' } });

/** Sends a whole answer in one write: its status, its headers, a content-length and the body. */
function sendWhole(res: ServerResponse, response: Response, chunks: Uint8Array[]) {
  const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  headers['content-length'] = String(body.byteLength);
  res.writeHead(response.status, headers);
  res.end(body);
}

/**
 * `response` as it is to be sent: an event stream that ends within the hold
 * is written here whole (the listener is told it was sent); one still open
 * goes on as a stream.
 */
async function holdStream(response: Response, res: ServerResponse): Promise<Response> {
  const type = response.headers.get('content-type');
  if (!response.body || !type || !EVENT_STREAM.test(type)) return response;
  const reader = response.body.getReader();
  const { chunks, pending } = await gather(reader, HEADERS_HOLD_MS);
  if (pending === null) {
    sendWhole(res, response, chunks);
    return ALREADY_SENT;
  }
  return new Response(resumed(reader, chunks, pending), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
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
        const response = await handler(request, {
          ...(incoming.auth !== undefined ? { authInfo: incoming.auth } : {}),
          ...(body !== undefined ? { parsedBody: body } : {}),
        });
        return await holdStream(response, env.outgoing as ServerResponse);
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
    await listener(req, res);
  };
}
