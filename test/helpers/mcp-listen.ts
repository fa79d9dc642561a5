/**
 * A raw 2026-07-28 `subscriptions/listen` over streamable HTTP (SEP-2575),
 * read frame by frame: the SDK client (v2.4) has no listen API that passes
 * `taskIds` through, and the tests pin the wire as it is.
 */
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
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 'listen-1',
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL,
          'io.modelcontextprotocol/clientInfo': { name: 'listen-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities':
            options.extension === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    }),
  });
  const messages: ListenMessage[] = [];
  const waiters = new Set<() => void>();
  const ended = (async () => {
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      messages.push((await res.json()) as ListenMessage);
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
          if (data) messages.push(JSON.parse(data) as ListenMessage);
          for (const wake of waiters) wake();
        }
      }
    } catch {
      // The client closed the stream.
    }
  })().finally(() => {
    for (const wake of waiters) wake();
  });
  let over = false;
  void ended.then(() => (over = true));
  return {
    status: res.status,
    messages,
    ended,
    async until(done, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!done(messages)) {
        if (over) throw new Error(`listen ended first: ${JSON.stringify(messages)}`);
        if (Date.now() > deadline)
          throw new Error(`listen: not yet after ${ms} ms: ${JSON.stringify(messages)}`);
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, 100);
          waiters.add(wake);
        });
      }
      return messages;
    },
    close: () => abort.abort(),
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
