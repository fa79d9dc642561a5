/**
 * A raw 2026-07-28 `subscriptions/listen` (SEP-2575) over streamable HTTP,
 * read frame by frame, or over a connected stdio client's transport: the SDK
 * client (v2.4) has no listen API that passes `taskIds` through, and the
 * tests pin the wire as it is.
 */
import type { Transport } from '@modelcontextprotocol/client';
import { MODERN_PROTOCOL } from './mcp-client.js';
import { TASKS_EXTENSION } from './mcp-tasks.js';

export interface ListenMessage {
  jsonrpc: '2.0';
  id?: unknown;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

export interface Listen {
  status: number;
  /** Every message received so far, in order. */
  messages: ListenMessage[];
  /** Resolves when the server ended the stream (or the client closed it). */
  ended: Promise<void>;
  /** Waits until `done(messages)` holds (default 10 s). */
  until(done: (messages: ListenMessage[]) => boolean, ms?: number): Promise<ListenMessage[]>;
  close(): void;
}

export interface ListenOptions {
  id?: string | number;
  /** Declare the tasks extension in the request's capabilities (default true). */
  extension?: boolean;
  /** The `clientInfo.name` in the request's envelope (stdio names its agent after it). */
  clientName?: string;
}

/** The listen request for `notifications`. */
function listenRequest(notifications: Record<string, unknown>, options: ListenOptions) {
  return {
    jsonrpc: '2.0' as const,
    id: options.id ?? 'listen-1',
    method: 'subscriptions/listen',
    params: {
      notifications,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL,
        'io.modelcontextprotocol/clientInfo': {
          name: options.clientName ?? 'listen-test',
          version: '1.0.0',
        },
        'io.modelcontextprotocol/clientCapabilities':
          options.extension === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } },
      },
    },
  };
}

/** The messages of one listen as they come, and a way to wait for them. */
function collector() {
  const messages: ListenMessage[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  let over = false;
  let resolve = () => undefined as void;
  const ended = new Promise<void>((r) => (resolve = r));
  return {
    messages,
    ended,
    push(message: ListenMessage) {
      messages.push(message);
      wake();
    },
    finish() {
      over = true;
      resolve();
      wake();
    },
    async until(done: (messages: ListenMessage[]) => boolean, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!done(messages)) {
        if (over) throw new Error(`listen ended first: ${JSON.stringify(messages)}`);
        if (Date.now() > deadline)
          throw new Error(`listen: not yet after ${ms} ms: ${JSON.stringify(messages)}`);
        await new Promise<void>((resolve) => {
          const woken = () => {
            waiters.delete(woken);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(woken, 100);
          waiters.add(woken);
        });
      }
      return messages;
    },
  };
}

/** Opens a listen at `url` for `notifications` as the agent with `token`. */
export async function listen(
  url: string,
  token: string,
  notifications: Record<string, unknown>,
  options: ListenOptions = {},
): Promise<Listen> {
  const abort = new AbortController();
  const res = await fetch(url, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL,
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify(listenRequest(notifications, options)),
  });
  const collected = collector();
  const read = collected.push;
  void (async () => {
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      read((await res.json()) as ListenMessage);
      return;
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = frame
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (data) read(JSON.parse(data) as ListenMessage);
        }
      }
    } catch {
      // The client closed the stream.
    }
  })().finally(collected.finish);
  return {
    status: res.status,
    messages: collected.messages,
    ended: collected.ended,
    until: collected.until,
    close: () => abort.abort(),
  };
}

/**
 * Opens a listen over `transport`, a stdio client's connected transport: the
 * listen's messages (its response, and notifications stamped with its id) are
 * taken off the transport before the client sees them. `close` sends
 * `notifications/cancelled` for it. `status` is always 200.
 */
export async function listenOver(
  transport: Transport,
  notifications: Record<string, unknown>,
  options: ListenOptions = {},
): Promise<Listen> {
  const request = listenRequest(notifications, options);
  const collected = collector();
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const m = message as ListenMessage;
    const ours =
      m.method === undefined
        ? m.id === request.id
        : m.params?._meta?.['io.modelcontextprotocol/subscriptionId'] === request.id;
    if (!ours) return deliver?.(message, extra);
    collected.push(m);
    if (m.method === undefined) collected.finish();
  };
  await transport.send(request);
  return {
    status: 200,
    messages: collected.messages,
    ended: collected.ended,
    until: collected.until,
    close() {
      void transport.send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: request.id },
      });
      collected.finish();
    },
  };
}

/** The `notifications/tasks` params received for `taskId`, in order. */
export const taskNotes = (messages: ListenMessage[], taskId: string) =>
  messages.filter((m) => m.method === 'notifications/tasks' && m.params?.['taskId'] === taskId);

/** A notification's params without `_meta`. */
export function withoutMeta(params: Record<string, unknown> | undefined) {
  const { _meta: _drop, ...rest } = params ?? {};
  return rest;
}
