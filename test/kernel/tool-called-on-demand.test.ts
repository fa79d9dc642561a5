/**
 * `toolCalled` is on demand (kernel.md §9, issue 31): a read call nobody
 * listens for appends nothing to the ordered event log; a listener that
 * wants it (on this instance or, over the transport, another) gets it,
 * numbered in the log like any other event.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEventBus,
  type BusMessage,
  type BusTransport,
  type DeliveredEvent,
  type EventBus,
} from '../../src/kernel/events/events.js';
import { storeEventLog } from '../../src/kernel/events/event-log.js';
import { createKernel, type Kernel } from '../../src/kernel/kernel.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import { openStore } from '../../src/store/open.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { conn } from '../helpers/kernel.js';
import { waitFor } from '../helpers/wait.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { describeWithRedis, REDIS_URL } from '../services/redis.js';
import { createRedisBusTransport } from '../../src/store/redis-bus.js';
import { connection } from '../../src/kernel/connection.js';
import { randomUUID } from 'node:crypto';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A transport handing every message to every started bus (one process, two instances). */
function fakeNetwork() {
  const deliverers: ((m: BusMessage) => void)[] = [];
  return (): BusTransport => ({
    async start(deliver) {
      deliverers.push(deliver);
    },
    async send(message) {
      for (const d of deliverers) d(message);
    },
    async close() {},
  });
}

interface Instance {
  kernel: Kernel;
  events: EventBus;
  store: Store;
}

/** A kernel with the ledger door whose bus is the store's event log (as `airlock serve` wires it). */
async function instance(
  backend: { pg?: string } = {},
  transport?: BusTransport,
  dir = mkdtempSync(join(tmpdir(), 'airlock-ondemand-')),
): Promise<Instance> {
  const opened = await openStore({
    data: dir,
    ...(backend.pg ? { store: `${PG_URL}?schema=${backend.pg}` } : {}),
  });
  const events = await createEventBus({
    log: storeEventLog(opened.store),
    ...(transport ? { transport, catchUpMs: 20 } : {}),
  });
  const kernel = createKernel({
    store: opened.store,
    blobs: opened.blobs,
    events,
    logger: silentLogger,
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  cleanups.push(async () => {
    await kernel.close();
    await events.close();
    await opened.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { kernel, events, store: opened.store };
}

const echo = (i: Instance) =>
  i.kernel.call('ledger', 'ledger_echo', { text: 'hi' }, { connection: conn() });

/** Everything the log holds (one read). */
const logged = async (store: Store) =>
  (await storeEventLog(store).read(0, 10_000)).events.map((e) => e.data.event);

/** A marker event (always logged): once it is in the log, whatever was published before it is too. */
async function flushed(i: Instance): Promise<string[]> {
  const marker = `marker-${Math.random()}`;
  i.events.publish({ event: 'testMarker', marker });
  let events: string[] = [];
  await waitFor(async () => {
    const read = (await storeEventLog(i.store).read(0, 10_000)).events;
    events = read.map((e) => e.data.event);
    return read.some((e) => e.data.marker === marker);
  });
  return events.filter((e) => e !== 'testMarker');
}

function suite(backend: () => { pg?: string }) {
  it('a read call nobody listens for appends nothing to the event log', async () => {
    const a = await instance(backend());
    // Listeners that ask for other events (the kernel's own, an MCP session's) do not keep it alive.
    a.events.subscribe(() => undefined, { events: ['toolsChanged'] });
    a.events.subscribe(() => undefined, { onDemand: false });
    const before = await logged(a.store);
    for (let n = 0; n < 5; n++) expect((await echo(a)).ok).toBe(true);
    expect(a.events.wants('toolCalled')).toBe(false);
    expect(await flushed(a)).toEqual(before);
  });

  it('a subscriber that asks for toolCalled gets it, numbered in the log', async () => {
    const a = await instance(backend());
    const got: DeliveredEvent[] = [];
    const stop = a.events.subscribe((e) => got.push(e), { events: ['toolCalled'] });
    expect((await echo(a)).ok).toBe(true);
    await waitFor(() => got.length === 1);
    expect(got[0]!.data).toMatchObject({ event: 'toolCalled', tool: 'ledger_echo', result: 'ok' });
    expect(await flushed(a)).toContain('toolCalled');
    // Replay reads it back under the same id.
    expect((await a.events.since(got[0]!.id - 1))?.[0]?.data.event).toBe('toolCalled');
    // Once it stops listening, calls append nothing again.
    stop();
    const count = (await flushed(a)).length;
    await echo(a);
    expect((await flushed(a)).length).toBe(count);
  });
}

describe('toolCalled on demand (SQLite log)', () => suite(() => ({})));

await describeWithPostgres('toolCalled on demand (PostgreSQL log)', () => {
  const schema = uniqueSchema('ondemand');
  afterAll(() => dropSchema(schema));
  suite(() => ({ pg: schema }));

  it("a listener on another instance gets the call's toolCalled; when it leaves, calls log nothing", async () => {
    const net = fakeNetwork();
    const a = await instance({ pg: schema }, net());
    const b = await instance({ pg: schema }, net());
    const got: DeliveredEvent[] = [];
    const stop = b.events.subscribe((e) => got.push(e), { events: ['toolCalled'] });
    // The interest crossed the transport at once.
    expect(a.events.wants('toolCalled')).toBe(true);
    await echo(a);
    await waitFor(() => got.length === 1);
    expect(got[0]!.data).toMatchObject({ event: 'toolCalled', tool: 'ledger_echo' });
    stop();
    // A's memory of B's interest lapses after three catch-up periods.
    await waitFor(() => !a.events.wants('toolCalled'));
    const count = (await flushed(a)).length;
    await echo(a);
    expect((await flushed(a)).length).toBe(count);
  });
});

// Two instances on one PostgreSQL schema and one Redis channel (PostgreSQL is required with Redis here).
await describeWithRedis('per-call state stays fresh on two instances over Redis', () => {
  const schema = uniqueSchema('ondemandredis');
  afterAll(() => dropSchema(schema));
  {
    const pair = async () => {
      const channel = `airlock:test:${randomUUID()}`;
      const redis = () => createRedisBusTransport({ url: REDIS_URL, channel });
      return [await instance({ pg: schema }, redis()), await instance({ pg: schema }, redis())];
    };

    it("a toolCalled listener on B gets A's calls over Redis; without one, A's calls log nothing", async () => {
      const [a, b] = await pair();
      const count = (await flushed(a!)).length;
      await echo(a!);
      expect((await flushed(a!)).length).toBe(count);
      const got: DeliveredEvent[] = [];
      b!.events.subscribe((e) => got.push(e), { events: ['toolCalled'] });
      await waitFor(() => a!.events.wants('toolCalled'), { message: "A hears B's interest" });
      await echo(a!);
      await waitFor(() => got.length === 1, { message: "B gets A's toolCalled" });
    });

    it('an agent revoked on B is refused on A at its very next call, though A just admitted it', async () => {
      const [a, b] = await pair();
      const added = await b!.kernel.principals.addAgent(`rv-${randomUUID().slice(0, 8)}`);
      if ('ok' in added) throw new Error(added.message);
      expect(await a!.kernel.principals.authenticate(added.token)).toMatchObject({ kind: 'agent' });
      await b!.kernel.principals.revokeAgent(added.name);
      // No wait for the bus: the epoch in the store answers.
      expect(await a!.kernel.principals.authenticate(added.token)).toBeNull();
    });

    it("a policy rule added on B decides A's next call once A's bus has it", async () => {
      const [a, b] = await pair();
      const agentConn = connection('http:olga', 'http-principal', undefined, 'olga');
      const call = () =>
        a!.kernel.call('ledger', 'ledger_echo', { text: 'x' }, { connection: agentConn });
      expect((await call()).ok).toBe(true);
      const heard: string[] = [];
      a!.events.subscribe((e) => heard.push(e.data.event), { events: ['policyChanged'] });
      await b!.kernel.policy.add({ tool: 'ledger_echo', agent: 'olga', decision: 'deny' });
      await waitFor(() => heard.includes('policyChanged'), { message: 'A hears the change' });
      expect(await call()).toMatchObject({ ok: false, code: 'notAuthorized' });
    });
  }
});
