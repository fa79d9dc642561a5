/**
 * Single-statement reads asked for at once go out together on one pooled
 * connection (read-gatherer.ts, issue 31), and stay independent: each is its
 * own snapshot, and one failing fails no other.
 */
import net from 'node:net';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import { ONE_STATEMENT } from '../../src/kernel/store.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { describeWithPostgres, freshStores } from '../services/postgres.js';

const openStore = freshStores('gather');
afterEach(() => {
  vi.restoreAllMocks();
});

const get = (store: PostgresStore, key: string) =>
  store.read((tx) => tx.records.get<number>('gather', key), ONE_STATEMENT);

await describeWithPostgres('PostgreSQL single-statement reads, gathered', () => {
  it('reads asked for at once share one connection and leave in one socket write', async () => {
    const store = await openStore();
    await store.transaction(async (tx) => {
      for (let i = 0; i < 8; i++) await tx.records.put('gather', `k${i}`, i);
    });
    const clients = new Set<pg.Client>();
    const names: unknown[] = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      clients.add(this);
      names.push((args[0] as { name?: string }).name);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    // Every socket write (one chunk or several at once).
    const socket = net.Socket.prototype as unknown as Record<
      '_write' | '_writev',
      (...a: unknown[]) => unknown
    >;
    const single = vi.spyOn(socket, '_write');
    const several = vi.spyOn(socket, '_writev');
    const before = { ...store.gatheredReads };
    const values = await Promise.all(Array.from({ length: 8 }, (_, i) => get(store, `k${i}`)));
    expect(values.map((v) => v?.value)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(store.gatheredReads.gatherings - before.gatherings).toBe(1);
    expect(store.gatheredReads.reads - before.reads).toBe(8);
    expect(clients.size).toBe(1);
    // Prepared once per connection, then only bound and run: the server plans each shape once.
    expect(names).toHaveLength(8);
    for (const name of names) expect(name).toMatch(/^airlock_[\w-]{20}$/);
    // Corked: the eight statements' messages went in one write.
    expect(single.mock.calls.length + several.mock.calls.length).toBe(1);
  });

  it('a read that fails fails alone: the others of its gathering answer, and the connection serves the next', async () => {
    const store = await openStore();
    await store.transaction((tx) => tx.records.put('gather', 'a', 1));
    const [before, bad, after] = await Promise.allSettled([
      get(store, 'a'),
      // PostgreSQL refuses a NUL in text: an error from the server, in the middle of the gathering.
      get(store, 'bad\u0000key'),
      get(store, 'a'),
    ]);
    expect(before).toMatchObject({ status: 'fulfilled', value: { value: 1 } });
    expect(bad.status).toBe('rejected');
    expect(after).toMatchObject({ status: 'fulfilled', value: { value: 1 } });
    expect((await get(store, 'a'))?.value).toBe(1);
  });

  it('a read declared single-statement that issues a second statement is refused, and its gathering goes on', async () => {
    const store = await openStore();
    await store.transaction((tx) => tx.records.put('gather', 'a', 1));
    const [two, one] = await Promise.allSettled([
      store.read(async (tx) => {
        await tx.records.get('gather', 'a');
        return tx.records.get('gather', 'a');
      }, ONE_STATEMENT),
      get(store, 'a'),
    ]);
    expect(two).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/declared single-statement/) },
    });
    expect(one).toMatchObject({ status: 'fulfilled', value: { value: 1 } });
  });

  it('each read is its own snapshot: a write committed between two gatherings is seen by the second', async () => {
    const store = await openStore();
    await store.transaction((tx) => tx.records.put('gather', 'v', 1));
    expect((await get(store, 'v'))?.value).toBe(1);
    await store.transaction((tx) => tx.records.put('gather', 'v', 2));
    expect((await get(store, 'v'))?.value).toBe(2);
  });
});
