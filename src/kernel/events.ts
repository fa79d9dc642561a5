/**
 * The one event bus (spec/kernel.md §9). Events are `{event, ...fields}`
 * objects (camelCase names such as `jobStarted`, `sceneChanged`). The bus
 * numbers each event it delivers locally and keeps a bounded ring so the SSE
 * endpoint can replay from `Last-Event-ID`.
 *
 * In scale-out mode a `BusTransport` (Redis) carries events between
 * instances: `publish` sends to the transport, and every instance (this one
 * included) delivers what the transport hands back. Without a transport,
 * delivery is in-process.
 */

export interface AirlockEvent {
  readonly event: string;
  readonly [field: string]: unknown;
}

export interface DeliveredEvent {
  /** Monotonic per instance; the SSE frame id. */
  readonly id: number;
  readonly at: number;
  readonly data: AirlockEvent;
}

export type EventListener = (event: DeliveredEvent) => void;

/** Carries events between instances (e.g. Redis pub/sub). */
export interface BusTransport {
  send(event: AirlockEvent): Promise<void>;
  /** Called once; `deliver` is invoked for every event from any instance. */
  start(deliver: (event: AirlockEvent) => void): Promise<void>;
  close(): Promise<void>;
}

export interface EventBus {
  publish(event: AirlockEvent): void;
  subscribe(listener: EventListener): () => void;
  /** Events with id greater than `afterId`, or null when the ring no longer reaches back that far. */
  since(afterId: number): DeliveredEvent[] | null;
  /** Id of the newest delivered event (the starting id when none yet). */
  readonly lastId: number;
  close(): Promise<void>;
}

export interface EventBusOptions {
  ringSize?: number;
  transport?: BusTransport;
  onError?: (error: unknown) => void;
  now?: () => number;
  /** Id before the first event (default: the clock in ms). */
  firstId?: number;
}

export async function createEventBus(options: EventBusOptions = {}): Promise<EventBus> {
  const ringSize = options.ringSize ?? 1000;
  const now = options.now ?? Date.now;
  const ring: DeliveredEvent[] = [];
  const listeners = new Set<EventListener>();
  // Ids start from the clock so that, after a restart, they continue above the old
  // ones and a client's stale Last-Event-ID gets a fresh snapshot, never silence.
  let lastId = options.firstId ?? now();

  const deliver = (data: AirlockEvent): void => {
    const delivered: DeliveredEvent = { id: ++lastId, at: now(), data };
    ring.push(delivered);
    if (ring.length > ringSize) ring.shift();
    for (const listener of [...listeners]) {
      try {
        listener(delivered);
      } catch (error) {
        options.onError?.(error);
      }
    }
  };

  const transport = options.transport;
  if (transport) await transport.start(deliver);

  return {
    publish(event) {
      if (!transport) return deliver(event);
      // The bus is down: this instance's own listeners still get the event (the
      // other instances cannot), rather than nobody.
      transport.send(event).catch((error) => {
        options.onError?.(error);
        deliver(event);
      });
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    since(afterId) {
      // An id from the future is from another run (or instance): start over with a snapshot.
      if (afterId > lastId) return null;
      if (afterId === lastId) return [];
      const oldest = ring[0];
      // The ring reaches back when it holds the event right after `afterId`.
      if (!oldest || oldest.id > afterId + 1) return null;
      return ring.filter((e) => e.id > afterId);
    },
    get lastId() {
      return lastId;
    },
    async close() {
      listeners.clear();
      await transport?.close();
    },
  };
}
