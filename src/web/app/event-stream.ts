/**
 * The live connection to `GET /api/v1/events` (spec/kernel.md §9). A fresh
 * connection gets a `snapshot` first; after a drop it reconnects with
 * bounded backoff and sends `Last-Event-ID`, so the server replays what was
 * missed (or sends a snapshot when its ring no longer reaches back).
 *
 * Event ids are counted per server process, so after the server was
 * unreachable (perhaps restarted, its ids starting again from 1) an old id
 * would make it skip new events; then the stream starts afresh, without
 * `Last-Event-ID`, and the snapshot reloads everything.
 */
import { API, sessionEnded, sessionHeaders, setOwnerSession } from './api.js';
import { createSseParser } from './sse-parser.js';

export interface LiveEvent {
  event: string;
  [field: string]: unknown;
}

export type StreamState =
  | { state: 'connecting' }
  | { state: 'live' }
  | { state: 'down'; retryInMs: number; reason: string };

export interface EventStreamOptions {
  onEvent(event: LiveEvent, id: string): void;
  onState(state: StreamState): void;
  /** Backoff bounds in ms (default 500 … 10,000). */
  minDelayMs?: number;
  maxDelayMs?: number;
}

export interface EventStream {
  close(): void;
  /** The id of the last frame received. */
  readonly lastEventId: string;
}

/** Delay before reconnect attempt `attempt` (0-based): doubling, capped, with a little jitter. */
export function backoff(attempt: number, min: number, max: number, random = Math.random): number {
  const base = Math.min(max, min * 2 ** Math.min(attempt, 20));
  return Math.round(base * (0.8 + 0.2 * random()));
}

export function connectEvents(options: EventStreamOptions): EventStream {
  const min = options.minDelayMs ?? 500;
  const max = options.maxDelayMs ?? 10_000;
  let lastEventId = '';
  let closed = false;
  let attempt = 0;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const once = async () => {
    controller = new AbortController();
    options.onState({ state: 'connecting' });
    const headers: Record<string, string> = {
      accept: 'text/event-stream',
      ...sessionHeaders(),
    };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    let res: Response;
    try {
      // fetch, not EventSource, so the session goes in its header like every request.
      res = await fetch(`${API}/events`, {
        headers,
        credentials: 'omit',
        signal: controller.signal,
        cache: 'no-store',
      });
    } catch (error) {
      // Unreachable: the server may come back restarted, counting ids from 1 again.
      lastEventId = '';
      throw error;
    }
    if (res.status === 401) {
      setOwnerSession(null);
      sessionEnded();
    }
    if (!res.ok || !res.body) {
      let message = `${res.status} ${res.statusText}`;
      try {
        message = ((await res.json()) as { message?: string }).message ?? message;
      } catch {
        // keep the status line
      }
      throw new Error(message);
    }
    const parser = createSseParser((m) => {
      lastEventId = m.id;
      let data: unknown;
      try {
        data = JSON.parse(m.data);
      } catch {
        return;
      }
      if (data && typeof data === 'object' && typeof (data as LiveEvent).event === 'string')
        options.onEvent(data as LiveEvent, m.id);
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let first = true;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (first) {
        first = false;
        attempt = 0;
        options.onState({ state: 'live' });
      }
      parser.push(value);
    }
    throw new Error('the server closed the event stream');
  };

  const loop = () => {
    if (closed) return;
    once().catch((error: unknown) => {
      if (closed) return;
      const delay = backoff(attempt++, min, max);
      options.onState({
        state: 'down',
        retryInMs: delay,
        reason: error instanceof Error ? error.message : String(error),
      });
      timer = setTimeout(loop, delay);
    });
  };
  loop();

  return {
    close() {
      closed = true;
      clearTimeout(timer);
      controller?.abort();
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
