/**
 * The one behaviour suite every EventBus passes (src/kernel/events/events.ts): the
 * in-process bus and the bus over a transport (Redis). Delivery may be
 * asynchronous (a transport hands events back later), so the suite waits for
 * delivery instead of expecting it synchronously.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  AirlockEvent,
  DeliveredEvent,
  EventBus,
  EventBusOptions,
} from '../../src/kernel/events/events.js';
import { waitFor } from '../helpers/wait.js';

/** Opens a fresh bus, isolated from every other bus the suite opens (its own channel, say). */
export type OpenBus = (options: Omit<EventBusOptions, 'transport'>) => Promise<EventBus>;

/**
 * `ringIds: false` for a bus whose ids come from an event log (the ring's
 * `firstId`, clock start and ring size do not apply; the log has its own tests).
 */
export function eventBusContract(name: string, open: OpenBus, { ringIds = true } = {}): void {
  const ringIt = ringIds ? it : it.skip;
  describe(`EventBus contract: ${name}`, () => {
    const opened: EventBus[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((bus) => bus.close()));
    });
    const bus = async (options: Omit<EventBusOptions, 'transport'> = {}) => {
      const b = await open(options);
      opened.push(b);
      return b;
    };
    /** Subscribes, publishes `events` and resolves with what the listener got once all arrived. */
    const publishAll = async (b: EventBus, events: AirlockEvent[]) => {
      const got: DeliveredEvent[] = [];
      const stop = b.subscribe((e) => got.push(e));
      for (const e of events) b.publish(e);
      await waitFor(() => got.length >= events.length, {
        timeoutMs: 5_000,
        message: `${events.length} events delivered (got ${got.length})`,
      });
      stop();
      return got;
    };
    const numbered = (n: number, event = 'tick') =>
      Array.from({ length: n }, (_, i) => ({ event, n: i }) as AirlockEvent);

    it('delivers every published event to a subscriber, unchanged and in publish order', async () => {
      const b = await bus();
      const sent = [
        { event: 'jobStarted', id: 'j1', kind: 'scan' },
        { event: 'jobProgress', id: 'j1', progress: 0.5, nested: { a: [1, 2] } },
        ...numbered(20),
        { event: 'jobFinished', id: 'j1', ok: true },
      ];
      const got = await publishAll(b, sent);
      expect(got.map((e) => e.data)).toEqual(sent);
    });

    ringIt(
      'numbers delivered events one apart from firstId, stamps them with now(), and lastId follows',
      async () => {
        const b = await bus({ firstId: 1000, now: () => 42 });
        expect(b.lastId).toBe(1000);
        const got = await publishAll(b, numbered(5));
        expect(got.map((e) => e.id)).toEqual([1001, 1002, 1003, 1004, 1005]);
        expect(got.every((e) => e.at === 42)).toBe(true);
        expect(b.lastId).toBe(1005);
      },
    );

    ringIt(
      'starts ids from the clock by default, so a restarted bus numbers above the old one',
      async () => {
        const before = Date.now();
        const b = await bus();
        expect(b.lastId).toBeGreaterThanOrEqual(before);
        const [first] = await publishAll(b, numbered(1));
        expect(first!.id).toBe(b.lastId);
        expect(first!.id).toBeGreaterThan(before);
      },
    );

    it('delivers each event to every subscriber with the same id', async () => {
      const b = await bus();
      const other: DeliveredEvent[] = [];
      b.subscribe((e) => other.push(e));
      const got = await publishAll(b, numbered(3));
      await waitFor(() => other.length >= 3, { message: 'the second subscriber to get 3 events' });
      expect(other).toEqual(got);
    });

    ringIt('since(id) replays the events after that id from the ring, in order', async () => {
      const b = await bus({ firstId: 0 });
      const got = await publishAll(b, numbered(6));
      expect(await b.since(0)).toEqual(got);
      expect(await b.since(3)).toEqual(got.slice(3));
      expect(await b.since(b.lastId)).toEqual([]);
    });

    ringIt(
      'since(id) answers null (snapshot needed) when the ring no longer reaches back, or the id is from the future',
      async () => {
        const b = await bus({ firstId: 0, ringSize: 4 });
        const got = await publishAll(b, numbered(10));
        // The ring holds ids 7..10: replay from 6 is complete, from 5 it would miss 6.
        expect(await b.since(6)).toEqual(got.slice(6));
        expect(await b.since(5)).toBeNull();
        expect(await b.since(0)).toBeNull();
        expect(await b.since(b.lastId + 1)).toBeNull();
      },
    );

    it('stops delivering to a listener once it unsubscribed, and keeps delivering to the others', async () => {
      const b = await bus();
      const gone: DeliveredEvent[] = [];
      const stay: DeliveredEvent[] = [];
      const unsubscribe = b.subscribe((e) => gone.push(e));
      b.subscribe((e) => stay.push(e));
      b.publish({ event: 'before' });
      await waitFor(() => gone.length === 1 && stay.length === 1, { message: 'the first event' });
      unsubscribe();
      b.publish({ event: 'after' });
      // Both listeners would get an event in the same delivery, so once the one
      // still subscribed has it, the other would have too.
      await waitFor(() => stay.length === 2, { message: 'the second event' });
      expect(gone.map((e) => e.data.event)).toEqual(['before']);
      expect(stay.map((e) => e.data.event)).toEqual(['before', 'after']);
    });

    it('a listener that throws is reported to onError and does not stop delivery to the others', async () => {
      const errors: unknown[] = [];
      const b = await bus({ onError: (e) => errors.push(e) });
      b.subscribe(() => {
        throw new Error('listener broke');
      });
      const got = await publishAll(b, numbered(2));
      expect(got).toHaveLength(2);
      expect(errors.map((e) => (e as Error).message)).toEqual(['listener broke', 'listener broke']);
    });
  });
}
