/**
 * The event bus over the deployment's event log (src/kernel/events/logged-bus.ts,
 * issue 15 P3/P5): one id space per store, replay on any instance, no gap and
 * no repeat when Redis drops messages or the store refuses for a while.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEventBus,
  type BusMessage,
  type BusTransport,
  type DeliveredEvent,
  type EventBus,
  type EventLog,
} from '../../src/kernel/events/events.js';
import { storeEventLog } from '../../src/kernel/events/event-log.js';
import type { Store } from '../../src/kernel/store.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { createPostgresStore } from '../../src/store/postgres/index.js';
import { createRedisBusTransport } from '../../src/store/redis-bus.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { describeWithRedis, REDIS_URL } from '../services/redis.js';
import { eventBusContract } from './event-bus-contract.js';

const dirs: string[] = [];
const stores: Store[] = [];
const buses: EventBus[] = [];
afterEach(async () => {
  for (const b of buses.splice(0)) await b.close();
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function sqliteStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-log-'));
  dirs.push(dir);
  const store = await createSqliteStore({ path: join(dir, 'a.db') });
  stores.push(store);
  return store;
}

async function track(bus: Promise<EventBus>): Promise<EventBus> {
  const b = await bus;
  buses.push(b);
  return b;
}

/** Collects what a bus delivers. */
function collect(bus: EventBus): DeliveredEvent[] {
  const got: DeliveredEvent[] = [];
  bus.subscribe((e) => got.push(e));
  return got;
}

const ids = (events: DeliveredEvent[]) => events.map((e) => e.id);
const increasing = (list: number[]) => list.every((id, i) => i === 0 || id > list[i - 1]!);

eventBusContract(
  'store event log (SQLite)',
  async (options) => createEventBus({ ...options, log: storeEventLog(await sqliteStore()) }),
  { ringIds: false },
);

/** A transport whose messages are handed to every started bus only when `pass` says so. */
function fakeNetwork(pass: (m: BusMessage) => boolean = () => true) {
  const deliverers: ((m: BusMessage) => void)[] = [];
  const transport = (): BusTransport => ({
    async start(deliver) {
      deliverers.push(deliver);
    },
    async send(message) {
      if (pass(message)) for (const d of deliverers) d(message);
    },
    async close() {},
  });
  return { transport, deliverers };
}

describe('event bus over the store log', () => {
  it('a restarted instance numbers on from the log, and replays events from before the restart', async () => {
    const store = await sqliteStore();
    const first = await createEventBus({ log: storeEventLog(store) });
    const before = collect(first);
    for (let n = 0; n < 3; n++) first.publish({ event: 'tick', n });
    await waitFor(() => before.length === 3, { message: 'three events' });
    await first.close();
    const second = await track(createEventBus({ log: storeEventLog(store) }));
    expect(second.lastId).toBe(before[2]!.id);
    expect(await second.since(before[0]!.id)).toEqual(before.slice(1));
    const after = collect(second);
    second.publish({ event: 'tick', n: 3 });
    await waitFor(() => after.length === 1, { message: 'the event after the restart' });
    expect(after[0]!.id).toBeGreaterThan(before[2]!.id);
  });

  it('since(id) answers null when the log was pruned past it, or for an id it never handed out', async () => {
    const store = await sqliteStore();
    const bus = await track(
      createEventBus({ log: storeEventLog(store, { retain: 5, pruneEvery: 4 }) }),
    );
    const got = collect(bus);
    for (let n = 0; n < 20; n++) bus.publish({ event: 'tick', n });
    await waitFor(() => got.length === 20, { message: 'twenty events' });
    const last = got[19]!.id;
    expect(await bus.since(last - 3)).toEqual(got.slice(17));
    expect(await bus.since(got[0]!.id)).toBeNull();
    expect(await bus.since(last + 1)).toBeNull();
    expect(await bus.since(last)).toEqual([]);
  });

  it('an event that arrives ahead of an earlier one is held and both are delivered in id order', async () => {
    const store = await sqliteStore();
    const net = fakeNetwork();
    const bus = await track(
      createEventBus({ log: storeEventLog(store), transport: net.transport() }),
    );
    const got = collect(bus);
    const rows = await store.transaction((tx) =>
      tx.events.append([
        { at: 1, data: { event: 'first' } },
        { at: 2, data: { event: 'second' } },
      ]),
    );
    net.deliverers[0]!({ id: rows[1]!.id, at: 2, data: rows[1]!.data });
    net.deliverers[0]!({ id: rows[0]!.id, at: 1, data: rows[0]!.data });
    net.deliverers[0]!({ id: rows[1]!.id, at: 2, data: rows[1]!.data });
    await waitFor(() => got.length === 2, { message: 'both events' });
    // Nothing more happens: the duplicate delivery is not passed on.
    await holdsFor(() => got.length === 2, 100, { message: 'no duplicate' });
    expect(got.map((e) => e.data.event)).toEqual(['first', 'second']);
  });

  it('while the store refuses appends, events wait and are then delivered once each, in publish order', async () => {
    const store = await sqliteStore();
    const real = storeEventLog(store);
    let refuse = 2;
    const flaky: EventLog = {
      ...real,
      append(entries) {
        if (refuse > 0) {
          refuse -= 1;
          return Promise.reject(new Error('the store is down'));
        }
        return real.append(entries);
      },
    };
    const errors: unknown[] = [];
    const bus = await track(createEventBus({ log: flaky, onError: (e) => errors.push(e) }));
    const got = collect(bus);
    for (let n = 0; n < 5; n++) bus.publish({ event: 'tick', n });
    await waitFor(() => got.length === 5, { timeoutMs: 5000, message: 'all five events' });
    expect(got.map((e) => e.data.n)).toEqual([0, 1, 2, 3, 4]);
    expect(increasing(ids(got))).toBe(true);
    expect(errors.length).toBe(2);
  });
});

await describeWithPostgres('event bus over the PostgreSQL log', () => {
  const schema = uniqueSchema('eventlog');
  afterAll(() => dropSchema(schema));
  const pgStore = async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    stores.push(store);
    return store;
  };

  it('two instances share one id space: each delivers every event once, in id order', async () => {
    const net = fakeNetwork();
    const a = await track(
      createEventBus({ log: storeEventLog(await pgStore()), transport: net.transport() }),
    );
    const b = await track(
      createEventBus({ log: storeEventLog(await pgStore()), transport: net.transport() }),
    );
    const [gotA, gotB] = [collect(a), collect(b)];
    for (let n = 0; n < 20; n++) {
      a.publish({ event: 'tick', from: 'a', n });
      b.publish({ event: 'tick', from: 'b', n });
    }
    await waitFor(() => gotA.length >= 40 && gotB.length >= 40, { message: '40 events on both' });
    // Nothing more happens: no event arrives twice.
    await holdsFor(() => gotA.length === 40 && gotB.length === 40, 100, {
      message: 'no extra event',
    });
    expect(gotA).toEqual(gotB);
    expect(gotA).toHaveLength(40);
    expect(increasing(ids(gotA))).toBe(true);
  });

  it("Last-Event-ID on another instance: since(id) on B replays exactly A's events after it", async () => {
    const a = await track(createEventBus({ log: storeEventLog(await pgStore()) }));
    const b = await track(createEventBus({ log: storeEventLog(await pgStore()) }));
    const gotA = collect(a);
    for (let n = 0; n < 10; n++) a.publish({ event: 'tick', n });
    await waitFor(() => gotA.length === 10, { message: 'ten events on A' });
    expect(await b.since(gotA[3]!.id)).toEqual(gotA.slice(4));
    expect(await b.since(gotA[9]!.id)).toEqual([]);
  });

  it('events a transport lost reach the other instance from the log, in order and once', async () => {
    let lose = true;
    const net = fakeNetwork(() => !lose);
    const a = await track(
      createEventBus({
        log: storeEventLog(await pgStore()),
        transport: net.transport(),
        catchUpMs: 100,
      }),
    );
    const b = await track(
      createEventBus({
        log: storeEventLog(await pgStore()),
        transport: net.transport(),
        catchUpMs: 100,
      }),
    );
    const [gotA, gotB] = [collect(a), collect(b)];
    for (let n = 0; n < 5; n++) a.publish({ event: 'tick', n });
    // A's own listeners get its events although the transport carries nothing.
    await waitFor(() => gotA.length === 5, { message: "A's own events" });
    lose = false;
    a.publish({ event: 'tick', n: 5 });
    await waitFor(() => gotB.length === 6, { message: 'all six events on B' });
    // Nothing more happens: the recovered events are not delivered again.
    await holdsFor(() => gotB.length === 6, 250, { message: 'no redelivery' });
    expect(gotB).toEqual(gotA);
  });
});

await describeWithRedis('event bus over the log and Redis', () => {
  it('two instances on one SQLite file and one Redis channel deliver the same events with the same ids', async () => {
    const store = await sqliteStore();
    const channel = `airlock:test:${randomUUID()}`;
    const open = () =>
      track(
        createEventBus({
          log: storeEventLog(store),
          transport: createRedisBusTransport({ url: REDIS_URL, channel }),
        }),
      );
    const [a, b] = [await open(), await open()];
    const [gotA, gotB] = [collect(a), collect(b)];
    for (let n = 0; n < 5; n++) (n % 2 ? a : b).publish({ event: 'tick', n });
    await waitFor(() => gotA.length === 5 && gotB.length === 5, { message: 'five events on both' });
    expect(gotA).toEqual(gotB);
    expect(increasing(ids(gotA))).toBe(true);
  });
});
