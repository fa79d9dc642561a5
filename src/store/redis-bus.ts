/**
 * Redis pub/sub carrying events between `airlock serve` instances
 * (spec/kernel.md §9, scale-out). Each instance publishes to one channel and
 * delivers everything it receives from it, its own events included, so every
 * instance sees the same events in the same order Redis delivers them.
 */
import { Redis } from 'ioredis';
import type { BusMessage, BusTransport } from '../kernel/events/events.js';

export interface RedisBusOptions {
  url: string;
  /**
   * The channel; deployments sharing one Redis must differ (the workspace
   * names it after its store's deployment id). Default `airlock:events`.
   */
  channel?: string;
  /** Connection trouble after start (Redis down, reconnecting), for the structured log. */
  onError?: (error: Error) => void;
}

/** A URL as logs may show it: without its password. */
const shown = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');

export function createRedisBusTransport({
  url,
  channel = 'airlock:events',
  onError,
}: RedisBusOptions): BusTransport {
  const opts = { lazyConnect: true, maxRetriesPerRequest: 3, connectTimeout: 5000 };
  const pub = new Redis(url, opts);
  const sub = new Redis(url, opts);
  // Errors go to the structured log (never ioredis's own unhandled-error lines on stderr),
  // at most one per 10 s per client while Redis stays unreachable.
  let lastReported = 0;
  let lastError: Error | undefined;
  const report = (error: Error) => {
    lastError = error;
    if (Date.now() - lastReported < 10_000) return;
    lastReported = Date.now();
    onError?.(error);
  };
  pub.on('error', report);
  sub.on('error', report);
  return {
    async start(deliver) {
      try {
        await Promise.all([pub.connect(), sub.connect()]);
      } catch (error) {
        pub.disconnect();
        sub.disconnect();
        throw new Error(
          `cannot reach the event bus at ${shown(url)}: ${(lastError ?? (error as Error)).message}; start Redis there or fix --bus`,
          { cause: error },
        );
      }
      sub.on('message', (ch: string, message: string) => {
        if (ch !== channel) return;
        // A foreign or corrupt message on our channel is ignored.
        const parsed = parseMessage(message);
        if (parsed) deliver(parsed);
      });
      await sub.subscribe(channel);
    },
    async send(message) {
      await pub.publish(channel, JSON.stringify(message));
    },
    async close() {
      await Promise.allSettled([sub.quit(), pub.quit()]);
    },
  };
}

/** A message as `send` wrote it, or null for anything else. */
function parseMessage(text: string): BusMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { id, at, data } = value as Record<string, unknown>;
  if (typeof data !== 'object' || data === null) return null;
  if (typeof (data as { event?: unknown }).event !== 'string') return null;
  if (id !== undefined && typeof id !== 'number') return null;
  if (at !== undefined && typeof at !== 'number') return null;
  return value as BusMessage;
}
