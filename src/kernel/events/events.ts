/**
 * The one event bus (spec/kernel.md §9). Events are `{event, ...fields}`
 * objects (camelCase names such as `jobStarted`, `sceneChanged`).
 *
 * With an `EventLog` (the workspace passes the store's), every event is
 * appended to the deployment's log first and numbered there, so an id means
 * the same event on every instance and `Last-Event-ID` replays from the log
 * (see logged-bus.ts). Without one (tests, one-shot CLI commands), the bus
 * numbers each event it delivers locally and keeps a bounded ring.
 *
 * A `BusTransport` (Redis) carries events between instances: without a log,
 * `publish` sends to the transport and every instance (this one included)
 * delivers what the transport hands back; with a log, the transport only
 * speeds up what the log already guarantees.
 */
import { createLoggedEventBus, type EventLog } from './logged-bus.js';

export type { EventLog } from './logged-bus.js';

export interface AirlockEvent {
  readonly event: string;
  readonly [field: string]: unknown;
}

export interface DeliveredEvent {
  /** Monotonic: per deployment with a log, per instance without; the SSE frame id. */
  readonly id: number;
  readonly at: number;
  readonly data: AirlockEvent;
}

export type EventListener = (event: DeliveredEvent) => void;

/**
 * Events published only while a listener wants them (kernel.md §9, issue 31):
 * a `toolCalled` nobody listens to is neither built, logged nor delivered, so
 * a read call writes nothing ordered.
 */
export const ON_DEMAND_EVENTS: ReadonlySet<string> = new Set(['toolCalled']);

export interface SubscribeOptions {
  /** Only these events reach the listener (default: all). */
  events?: readonly string[];
  /** False: every event but the on-demand ones (a listener that must not keep them alive). */
  onDemand?: boolean;
}

/** The listener set of a bus, with how many listeners want each on-demand event. */
export interface Listeners {
  add(listener: EventListener, options?: SubscribeOptions): () => void;
  deliver(event: DeliveredEvent, report: (error: unknown) => void): void;
  wants(event: string): boolean;
  clear(): void;
}

export function createListeners(): Listeners {
  /** Per listener, which events it takes: all (null), or a predicate. */
  const all = new Map<EventListener, ((event: string) => boolean) | null>();
  const wanting = new Map<string, number>();
  const count = (takes: ((event: string) => boolean) | null, by: 1 | -1) => {
    for (const name of ON_DEMAND_EVENTS)
      if (!takes || takes(name)) wanting.set(name, (wanting.get(name) ?? 0) + by);
  };
  return {
    add(listener, options) {
      // Subscribing one function twice is one listener (as with a Set).
      if (all.has(listener)) return () => undefined;
      const only = options?.events ? new Set(options.events) : null;
      const takes = only
        ? (event: string) => only.has(event)
        : options?.onDemand === false
          ? (event: string) => !ON_DEMAND_EVENTS.has(event)
          : null;
      all.set(listener, takes);
      count(takes, 1);
      return () => {
        if (all.get(listener) !== takes || !all.delete(listener)) return;
        count(takes, -1);
      };
    },
    deliver(event, report) {
      for (const [listener, takes] of [...all]) {
        if (takes && !takes(event.data.event)) continue;
        try {
          listener(event);
        } catch (error) {
          report(error);
        }
      }
    },
    wants(event) {
      return !ON_DEMAND_EVENTS.has(event) || (wanting.get(event) ?? 0) > 0;
    },
    clear() {
      all.clear();
      wanting.clear();
    },
  };
}

/** What a transport carries: the event, and its log id and time when the bus has a log. */
export interface BusMessage {
  readonly id?: number;
  readonly at?: number;
  readonly data: AirlockEvent;
}

/** Carries events between instances (e.g. Redis pub/sub). */
export interface BusTransport {
  send(message: BusMessage): Promise<void>;
  /** Called once; `deliver` is invoked for every message from any instance. */
  start(deliver: (message: BusMessage) => void): Promise<void>;
  close(): Promise<void>;
}

export interface EventBus {
  /** An on-demand event (ON_DEMAND_EVENTS) nobody wants is dropped: check `wants` before building one. */
  publish(event: AirlockEvent): void;
  subscribe(listener: EventListener, options?: SubscribeOptions): () => void;
  /** Whether a listener (on any instance, with a transport) wants `event` now; always true for other events. */
  wants(event: string): boolean;
  /**
   * Events with id greater than `afterId`, or null when the ring (or log) no
   * longer reaches back that far or the id is not one of this bus's.
   */
  since(afterId: number): Promise<DeliveredEvent[] | null>;
  /** Id of the newest delivered event (the starting id when none yet). */
  readonly lastId: number;
  close(): Promise<void>;
}

export interface EventBusOptions {
  /** The deployment's event log; ids then come from it (see logged-bus.ts). */
  log?: EventLog;
  /** Without a log: how many events the ring keeps for replay. */
  ringSize?: number;
  transport?: BusTransport;
  onError?: (error: unknown) => void;
  now?: () => number;
  /** Without a log: id before the first event (default: the clock in ms). */
  firstId?: number;
  /** With a log and a transport: how often the log is read for missed events (default 1 s). */
  catchUpMs?: number;
}

export async function createEventBus(options: EventBusOptions = {}): Promise<EventBus> {
  if (options.log) return createLoggedEventBus({ ...options, log: options.log });
  return createRingEventBus(options);
}

async function createRingEventBus(options: EventBusOptions): Promise<EventBus> {
  const ringSize = options.ringSize ?? 1000;
  const now = options.now ?? Date.now;
  const ring: DeliveredEvent[] = [];
  const listeners = createListeners();
  const report = (error: unknown) => options.onError?.(error);
  // Ids start from the clock so that, after a restart, they continue above the old
  // ones and a client's stale Last-Event-ID gets a fresh snapshot, never silence.
  let lastId = options.firstId ?? now();

  const deliver = (data: AirlockEvent): void => {
    const delivered: DeliveredEvent = { id: ++lastId, at: now(), data };
    ring.push(delivered);
    if (ring.length > ringSize) ring.shift();
    listeners.deliver(delivered, report);
  };

  const transport = options.transport;
  if (transport) await transport.start((message) => deliver(message.data));

  return {
    publish(event) {
      if (!transport) return listeners.wants(event.event) ? deliver(event) : undefined;
      // The bus is down: this instance's own listeners still get the event (the
      // other instances cannot), rather than nobody.
      transport.send({ data: event }).catch((error) => {
        options.onError?.(error);
        deliver(event);
      });
    },
    subscribe(listener, subscribeOptions) {
      return listeners.add(listener, subscribeOptions);
    },
    wants(event) {
      // With a transport another instance may want it: the ring bus is for tests and one-shot commands.
      return transport !== undefined || listeners.wants(event);
    },
    async since(afterId) {
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
