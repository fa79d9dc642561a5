/**
 * The event bus over the deployment's event log (spec/kernel.md §9, issue
 * 15). `publish` appends to the log (queued events go in one transaction),
 * which hands out the id; the event is then delivered to this instance's
 * listeners and sent over the transport to the others.
 *
 * Every instance delivers in id order, without gaps and without repeats: an
 * event that arrives ahead of a missing id is held until the missing one
 * arrives or, shortly after, the log is read for it (the log commits in id
 * order, so what it does not hold by then will never exist). The log is
 * also read every `catchUpMs`, so events a Redis outage swallowed are
 * delivered when (or even before) Redis returns, and instances that share
 * only the store (PostgreSQL without Redis) hear each other within it.
 *
 * When the log cannot be written (the store is down) events wait in order and
 * are retried; nothing is delivered without its id.
 *
 * An on-demand event (`toolCalled`) is logged only while a listener on some
 * instance wants it (issue 31: a read writes nothing ordered). With a
 * transport, an instance whose listeners want one says so on the transport
 * (`busInterest`, unlogged) at once and then every `catchUpMs`; the others
 * count it for three such periods.
 */
import { randomUUID } from 'node:crypto';
import {
  createListeners,
  ON_DEMAND_EVENTS,
  type AirlockEvent,
  type BusMessage,
  type DeliveredEvent,
  type EventBus,
  type EventBusOptions,
} from './events.js';

export interface EventLog {
  /** Appends in order, in one transaction; returns the events with their ids. */
  append(entries: readonly { at: number; data: AirlockEvent }[]): Promise<DeliveredEvent[]>;
  /** Up to `limit` events after `afterId`, and the lowest and highest id kept (one snapshot). */
  read(
    afterId: number,
    limit: number,
  ): Promise<{ events: DeliveredEvent[]; first: number | null; last: number }>;
  /** How many events the log keeps (a replay reads at most this many). */
  readonly retained: number;
}

/** How long an event waits for a missing earlier id before the log is read. */
const GAP_WAIT_MS = 50;
const BATCH = 200;
const READ_PAGE = 1000;
/** Events waiting for a store that is down; beyond this the oldest are dropped (logged). */
const MAX_QUEUED = 50_000;

export async function createLoggedEventBus(
  options: EventBusOptions & { log: EventLog },
): Promise<EventBus> {
  const { log, transport } = options;
  const now = options.now ?? Date.now;
  const report = (error: unknown) => options.onError?.(error);
  const listeners = createListeners();
  let closed = false;
  const catchUpMs = options.catchUpMs ?? 1_000;
  const interest = remoteInterest(transport, now, catchUpMs * 3, report);

  const wanted = () => [...ON_DEMAND_EVENTS].filter((name) => listeners.wants(name));
  const wants = (event: string) => listeners.wants(event) || interest.wants(event);
  // A new instance starts at the log's head: what came before is history (replay).
  const ordered = inOrder(log, (await log.read(Number.MAX_SAFE_INTEGER, 0)).last, {
    deliver: (e) => listeners.deliver(e, report),
    report,
    closed: () => closed,
  });
  const { accept, catchUp } = ordered;

  const queue: { at: number; data: AirlockEvent }[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async () => {
    let backoff = 100;
    while (queue.length > 0) {
      const batch = queue.slice(0, BATCH);
      let logged: DeliveredEvent[];
      try {
        logged = await log.append(batch);
      } catch (error) {
        report(error);
        if (closed) return;
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(5_000, backoff * 2);
        continue;
      }
      queue.splice(0, batch.length);
      backoff = 100;
      for (const e of logged) {
        accept(e);
        transport?.send({ id: e.id, at: e.at, data: e.data }).catch(report);
      }
    }
  };

  if (transport) {
    await transport.start((message: BusMessage) => {
      if (typeof message.id !== 'number' || typeof message.at !== 'number')
        return interest.heard(message.data);
      accept({ id: message.id, at: message.at, data: message.data });
    });
  }
  // Read the log every catchUpMs even without a transport: instances sharing
  // only the store (PostgreSQL, no Redis) hear each other's events that way.
  const poll = setInterval(() => {
    void catchUp();
    interest.announce(wanted());
  }, catchUpMs);
  poll.unref();

  return {
    publish(event) {
      if (closed || !wants(event.event)) return;
      queue.push({ at: now(), data: event });
      if (queue.length > MAX_QUEUED) {
        queue.splice(0, queue.length - MAX_QUEUED);
        report(new Error(`event log unavailable: dropped events beyond ${MAX_QUEUED} queued`));
      }
      flushing ??= flush().finally(() => {
        flushing = undefined;
      });
    },
    subscribe(listener, subscribeOptions) {
      const before = wanted().length;
      const unsubscribe = listeners.add(listener, subscribeOptions);
      // The other instances hear of a new interest at once, not at the next period.
      if (wanted().length > before) interest.announce(wanted());
      return unsubscribe;
    },
    wants,
    async since(afterId) {
      const { events, first, last } = await log.read(afterId, log.retained + READ_PAGE);
      // An id the log never handed out (another deployment, a reset store): start over.
      if (afterId > Math.max(last, ordered.lastId())) return null;
      // Pruned past it: the event right after `afterId` may be gone.
      if (first !== null && afterId < first - 1) return null;
      if (first === null && afterId < last) return null;
      return events;
    },
    get lastId() {
      return ordered.lastId();
    },
    async close() {
      // Events published before close are logged (and so reach the others) first.
      await Promise.race([flushing, new Promise((r) => setTimeout(r, 2_000).unref())]);
      closed = true;
      clearInterval(poll);
      ordered.stop();
      listeners.clear();
      await transport?.close();
    },
  };
}

/**
 * Delivers the log's events in id order from `lastId` on: an event that
 * arrives ahead of a missing one is held up to GAP_WAIT_MS, then the log is
 * read to fill the gap (one read at a time; a request during a read runs
 * once more after it).
 */
function inOrder(
  log: EventLog,
  startId: number,
  o: { deliver(e: DeliveredEvent): void; report(error: unknown): void; closed(): boolean },
) {
  let lastId = startId;
  const held = new Map<number, DeliveredEvent>();
  let gapTimer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;
  let again = false;

  const emit = (e: DeliveredEvent) => {
    lastId = e.id;
    o.deliver(e);
  };
  const drainHeld = () => {
    for (let next = held.get(lastId + 1); next; next = held.get(lastId + 1)) {
      held.delete(next.id);
      emit(next);
    }
  };
  const waitForGap = () => {
    if (held.size > 0 && !gapTimer && !o.closed())
      gapTimer = setTimeout(() => {
        gapTimer = undefined;
        void catchUp();
      }, GAP_WAIT_MS);
  };
  const readAll = async () => {
    do {
      again = false;
      try {
        for (;;) {
          const { events } = await log.read(lastId, READ_PAGE);
          for (const e of events) if (e.id > lastId) emit(e);
          for (const id of held.keys()) if (id <= lastId) held.delete(id);
          if (events.length < READ_PAGE) break;
        }
      } catch (error) {
        o.report(error);
      }
      // Held events after the read came later than it; deliver what now follows on.
      drainHeld();
    } while (again && !o.closed());
  };
  function catchUp(): Promise<void> {
    if (reading) {
      again = true;
      return reading;
    }
    reading = readAll().finally(() => {
      reading = undefined;
      waitForGap();
    });
    return reading;
  }
  return {
    accept(e: DeliveredEvent) {
      if (e.id <= lastId || held.has(e.id)) return;
      held.set(e.id, e);
      drainHeld();
      waitForGap();
    },
    catchUp,
    lastId: () => lastId,
    stop: () => clearTimeout(gapTimer),
  };
}

const INTEREST = 'busInterest';

/** Which on-demand events listeners on other instances want (heard over the transport). */
function remoteInterest(
  transport: EventBusOptions['transport'],
  now: () => number,
  ttlMs: number,
  report: (error: unknown) => void,
) {
  const instance = randomUUID();
  const until = new Map<string, number>();
  return {
    announce(events: readonly string[]) {
      if (!transport || events.length === 0) return;
      transport.send({ data: { event: INTEREST, instance, events } }).catch(report);
    },
    heard(data: AirlockEvent) {
      if (data.event !== INTEREST || data.instance === instance || !Array.isArray(data.events))
        return;
      for (const name of data.events)
        if (typeof name === 'string' && ON_DEMAND_EVENTS.has(name)) until.set(name, now() + ttlMs);
    },
    wants(event: string) {
      return (until.get(event) ?? 0) > now();
    },
  };
}
