/**
 * The SSE response of one `subscriptions/listen` (SEP-2575) that Airlock
 * serves itself, framed as the SDK's listen router frames its own: each
 * notification is an `event: message` frame with the subscription id (the
 * listen request's id) stamped in `params._meta`; a keep-alive comment
 * keeps proxies from closing a quiet stream; a graceful end sends the empty
 * listen result (`resultType: "complete"`, the subscription id and the
 * server's identity in `_meta`), an abrupt one just closes. The client
 * going away ends it too.
 */
import type { ServerResponse } from 'node:http';
import { listenResult, stamped } from './tasks/mcp-task-subscription.js';

export interface ListenStream {
  /** Writes a notification (nothing once ended); the headers go with the first. */
  notify(method: string, params?: Record<string, unknown>): void;
  /** Ends the stream once; `graceful` sends the listen result first. */
  end(graceful: boolean): void;
  readonly ended: boolean;
}

export function openListenStream(
  res: ServerResponse,
  subscriptionId: unknown,
  options: { keepAliveMs: number; onEnd(): void },
): ListenStream {
  let ended = false;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const frame = (message: Record<string, unknown>) => {
    if (!res.headersSent) {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      keepAlive = setInterval(() => res.write(': keepalive\n\n'), options.keepAliveMs);
      keepAlive.unref();
    }
    res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
  };
  const stream: ListenStream = {
    notify(method, params) {
      if (ended) return;
      frame({ method, params: stamped(params, subscriptionId) });
    },
    end(graceful) {
      if (ended) return;
      if (graceful) frame(listenResult(subscriptionId));
      ended = true;
      if (keepAlive) clearInterval(keepAlive);
      res.end();
      options.onEnd();
    },
    get ended() {
      return ended;
    },
  };
  res.on('close', () => stream.end(false));
  return stream;
}
