/**
 * Round trips of a journaled write on PostgreSQL (issue 31), counted on the
 * wire: every `query` of pg's client is one message and one answer. The
 * group writer sends its BEGIN with the first statement and the audit
 * insert with the COMMIT, a transaction that issued nothing commits
 * nothing, and the reads before the write go out together.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import type { Kernel } from '../../src/kernel/kernel.js';
import { connection } from '../../src/kernel/connection.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { ledgerKernel } from './ledger-kernel.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const schemas: string[] = [];
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  for (const s of schemas) await dropSchema(s).catch(() => undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function openStore(): Promise<PostgresStore> {
  const schema = uniqueSchema('trips');
  schemas.push(schema);
  const store = await createPostgresStore({ url: PG_URL, schema });
  cleanup.push(() => store.close());
  return store;
}

/** Every query sent from now on, with the connection it went on. */
function countQueries() {
  // `ahead`: queries on its connection sent and not yet answered when it was sent.
  const sent: { client: pg.Client; text: string; name?: string; ahead: number }[] = [];
  // Queries sent on a connection and not yet answered, now and at most.
  const inFlight = new Map<pg.Client, number>();
  let most = 0;
  const original = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
    this: pg.Client,
    ...args: unknown[]
  ) {
    const first = args[0];
    const text = typeof first === 'string' ? first : (first as { text: string }).text;
    const name = typeof first === 'string' ? undefined : (first as { name?: string }).name;
    sent.push({ client: this, text, ...(name ? { name } : {}), ahead: inFlight.get(this) ?? 0 });
    const now = (inFlight.get(this) ?? 0) + 1;
    inFlight.set(this, now);
    most = Math.max(most, now);
    const settled = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    if (result instanceof Promise) result.then(settled, settled);
    return result;
  } as typeof original);
  /** The queries of the write transactions: from a BEGIN … READ COMMITTED to its COMMIT, per connection. */
  const inWrites = () => {
    const open = new Set<pg.Client>();
    const trips: string[] = [];
    for (const { client, text } of sent) {
      const flat = text.replace(/\s+/g, ' ').trim();
      if (flat.startsWith('BEGIN ISOLATION LEVEL READ COMMITTED')) open.add(client);
      if (!open.has(client)) continue;
      trips.push(flat);
      if (/(COMMIT|ROLLBACK)$/.test(flat)) open.delete(client);
    }
    return trips;
  };
  return {
    sent,
    inWrites,
    mostInFlight: () => most,
    inFlight: (c: pg.Client) => inFlight.get(c) ?? 0,
  };
}

/** Eight writers whose accounts exist already (each account's read is then one statement). */
async function eightWriters(kernel: Kernel, prefix: string) {
  const appends = await Promise.all(
    Array.from({ length: 8 }, (_, i) => writer(kernel, `${prefix}${i}`)),
  );
  await Promise.all(appends.map((append, i) => append(`acct${i}`)));
  return () => Promise.all(appends.map((append, i) => append(`acct${i}`)));
}

async function writer(kernel: Kernel, name: string) {
  const conn = connection(name, 'internal');
  await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
  const pending = (await kernel.consent.pending()).find((p) => p.connection === conn.id);
  if (pending) await kernel.consent.approve(pending.id, null);
  return (account: string) =>
    kernel.call(
      'ledger',
      'ledger_append',
      { operationID: randomUUID(), account, amount: 1, expectedVersion: null },
      { connection: conn },
    );
}

/** A journaled write on an account that exists already (its read is one statement), its queries counted. */
async function oneCountedWrite(name: string) {
  const kernel = await ledgerKernel(await openStore(), cleanup);
  const append = await writer(kernel, name);
  expect((await append('acct')).ok).toBe(true);
  const queries = countQueries();
  expect((await append('acct')).ok).toBe(true);
  return queries;
}

/** Eight journaled writes at once, warmed up; their queries counted and the groups they took. */
async function eightCountedWrites(prefix: string) {
  const store = await openStore();
  const appendAll = await eightWriters(await ledgerKernel(store, cleanup), prefix);
  const groupsBefore = store.commits.groups;
  const queries = countQueries();
  const results = await appendAll();
  expect(results.every((r) => r.ok)).toBe(true);
  return { queries, groups: store.commits.groups - groupsBefore };
}

await describeWithPostgres('PostgreSQL round trips per journaled write', () => {
  it('a lone journaled write is two round trips in its transaction: BEGIN with the door read, then door write, journal insert and audit with COMMIT sent together', async () => {
    const queries = await oneCountedWrite('trips:one');
    const trips = queries.inWrites();
    expect(trips).toHaveLength(4);
    expect(trips[0]).toMatch(
      /^BEGIN ISOLATION LEVEL READ COMMITTED; SELECT .* FROM records .* FOR UPDATE$/,
    );
    expect(trips[1]).toMatch(/^INSERT INTO records /);
    expect(trips[2]).toMatch(/^INSERT INTO journal /);
    expect(trips[3]).toMatch(/INSERT INTO audit .*; COMMIT$/);
    // The door write and the journal insert waited for the COMMIT's message and went out with it.
    const write = queries.sent.filter((q) => /^INSERT INTO records /.test(q.text));
    const commit = queries.sent.filter((q) => /COMMIT$/.test(q.text));
    expect(write).toHaveLength(1);
    expect(commit).toHaveLength(1);
    expect(write[0]!.ahead).toBe(0);
    expect(commit[0]!.ahead).toBe(2);
  });

  it("a journaled write's replay read and grant read go out together, on one connection, before its transaction", async () => {
    const queries = await oneCountedWrite('trips:reads');
    const begin = queries.sent.findIndex((q) => q.text.startsWith('BEGIN'));
    const reads = queries.sent.slice(0, begin);
    expect(reads.map((q) => q.text.replace(/\s+/g, ' ').match(/FROM (\w+)/)?.[1]).sort()).toEqual([
      'grants',
      'journal',
    ]);
    expect(new Set(reads.map((q) => q.client)).size).toBe(1);
    // The second was sent before the first was answered.
    expect(reads.map((q) => q.ahead)).toEqual([0, 1]);
  });

  it("the group writer's statements are sent as named prepared statements", async () => {
    const queries = await oneCountedWrite('trips:prepared');
    // The door write and the journal insert (the door read went with BEGIN as one message).
    const inWrite = queries.sent.filter((q) => /^INSERT INTO (records|journal) /.test(q.text));
    expect(inWrite).toHaveLength(2);
    expect(new Set(inWrite.map((q) => q.name)).size).toBe(2);
    for (const q of inWrite) expect(q.name).toMatch(/^airlock_[\w-]{20}$/);
  });

  it('eight journaled writes at once share one BEGIN and one COMMIT per group', async () => {
    const { queries, groups } = await eightCountedWrites('trips:many');
    const trips = queries.inWrites();
    // Three statements per write (two of them sent with the COMMIT), and per group the audit insert with its COMMIT.
    expect(trips.filter((t) => t.startsWith('BEGIN'))).toHaveLength(groups);
    expect(trips.filter((t) => t.endsWith('COMMIT'))).toHaveLength(groups);
    expect(trips).toHaveLength(8 * 3 + groups);
  });

  it("a group's writes put their statements on the wire at once, without waiting for each other's answers (pipelined)", async () => {
    const { queries, groups } = await eightCountedWrites('trips:pipe');
    // Fewer groups than writes: some group held several writes, whose statements overlapped.
    expect(groups).toBeLessThan(8);
    expect(queries.mostInFlight()).toBeGreaterThan(1);
  });

  it('a snapshot read sends its BEGIN with its first statement: two statements are three round trips with the COMMIT', async () => {
    const store = await openStore();
    await store.transaction((tx) => tx.records.put('snap', 'a', 1));
    const queries = countQueries();
    const values = await store.read(async (tx) => [
      (await tx.records.get<number>('snap', 'a'))?.value,
      (await tx.records.get<number>('snap', 'b'))?.value ?? null,
    ]);
    expect(values).toEqual([1, null]);
    const texts = queries.sent.map((q) => q.text.replace(/\s+/g, ' '));
    expect(texts).toHaveLength(3);
    expect(texts[0]).toMatch(
      /^BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT .* FROM records /,
    );
    expect(texts[1]).toMatch(/^SELECT .* FROM records /);
    expect(queries.sent[1]!.name).toMatch(/^airlock_[\w-]{20}$/);
    expect(texts[2]).toBe('COMMIT');
  });

  it('a snapshot read answers without waiting for its COMMIT, and the connection serves the next read behind it', async () => {
    const store = await openStore();
    await store.transaction((tx) => tx.records.put('snap', 'a', 1));
    const queries = countQueries();
    const read = () =>
      store.read(async (tx) => [
        (await tx.records.get<number>('snap', 'a'))?.value,
        (await tx.records.get<number>('snap', 'b'))?.value ?? null,
      ]);
    expect(await read()).toEqual([1, null]);
    const commit = queries.sent.at(-1)!;
    expect(commit.text).toBe('COMMIT');
    // Answered while its COMMIT is still on its way.
    expect(queries.inFlight(commit.client)).toBe(1);
    expect(await read()).toEqual([1, null]);
    const commits = queries.sent.filter((q) => q.text === 'COMMIT');
    expect(commits).toHaveLength(2);
    expect(commits[1]!.client).toBe(commit.client); // the same connection, reused behind it
  });

  it('a read that issues no statement sends nothing', async () => {
    const store = await openStore();
    const queries = countQueries();
    expect(await store.read(async () => 7)).toBe(7);
    expect(queries.sent).toEqual([]);
  });

  it('a keyed transaction that issues no statement sends nothing', async () => {
    const store = await openStore();
    const queries = countQueries();
    expect(await store.transaction(async () => 42, { isolation: 'keyed' })).toBe(42);
    expect(queries.sent).toEqual([]);
  });
});
