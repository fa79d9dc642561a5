/**
 * The PostgreSQL group writer runs a group's writes at once on the group's
 * connection (issue 31; src/store/postgres/concurrent-group.ts): writes on
 * different rows overlap, writes that meet on a row make the group run
 * again one write at a time, and a write that fails on the server is
 * answered alone while the others commit.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import type { StoreTx } from '../../src/kernel/store.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { statementKey } from '../../src/store/postgres/statement-keys.js';
import { createStoreTx } from '../../src/store/sql/store-tx.js';
import type { SqlClient, SqlParam } from '../../src/store/sql/sql-client.js';
import { describeWithPostgres, freshStores } from '../services/postgres.js';

const openStore = freshStores('group');
afterEach(() => {
  vi.restoreAllMocks();
});

const KEYED = { isolation: 'keyed' } as const;

/**
 * Holds the writer's only running group open until `release`, so the writes
 * queued meanwhile form the next group together.
 */
async function holdWriter(store: PostgresStore) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const held = store.transaction(async (tx) => {
    await tx.records.put('gate', 'k', 1);
    started();
    await gate;
  }, KEYED);
  await running;
  return {
    release: async () => {
      release();
      await held;
    },
  };
}

/** Statements the shared repositories send in a keyed transaction, recorded instead of run. */
function recordingTx(): { tx: StoreTx; sent: { sql: string; params: readonly SqlParam[] }[] } {
  const sent: { sql: string; params: readonly SqlParam[] }[] = [];
  const client: SqlClient = {
    dialect: 'postgres',
    lockingReads: true,
    async all(sql, params = []) {
      sent.push({ sql, params });
      return [];
    },
    async run(sql, params = []) {
      sent.push({ sql, params });
      return 1;
    },
  };
  return { tx: createStoreTx(client), sent };
}

describe('statement keys', () => {
  it('names the row of every keyed record and journal statement the repositories send', async () => {
    const { tx, sent } = recordingTx();
    await tx.records.get('c', 'k'); // the read, the absent key's lock, the read again
    await tx.records.put('c', 'k', { v: 1 });
    await tx.records.delete('c', 'k');
    await tx.journal.get('s', 'op');
    await tx.journal.insert({
      scope: 's',
      operationId: 'op',
      digest: 'd',
      state: 'committed',
      tool: 't',
      connection: 'c',
      target: null,
      receipt: null,
      provenance: null,
      createdAt: 1,
      updatedAt: 1,
      expiresAt: 2,
    });
    await tx.journal.update('s', 'op', { state: 'uncertain', receipt: 1, updatedAt: 2 });
    await tx.journal.delete('s', 'op');
    expect(sent.map(({ sql, params }) => statementKey(sql, params))).toEqual([
      'records\u0000c\u0000k',
      'records\u0000c\u0000k',
      'records\u0000c\u0000k',
      'records\u0000c\u0000k',
      'records\u0000c\u0000k',
      'journal\u0000s\u0000op',
      'journal\u0000s\u0000op',
      'journal\u0000s\u0000op',
      'journal\u0000s\u0000op',
    ]);
  });

  it('knows no row of a list, a range delete or another table', async () => {
    const { tx, sent } = recordingTx();
    await tx.records.list('c', { prefix: 'a' });
    await tx.journal.purgeExpired(5);
    await tx.journal.listByState('prepared');
    await tx.grants.get('g');
    await tx.approvals.listPendingOf('agent');
    expect(sent.map(({ sql, params }) => statementKey(sql, params))).toEqual(sent.map(() => null));
  });
});

await describeWithPostgres('PostgreSQL group writer: writes of a group at once', () => {
  it('runs the writes of one group at once: a write waiting for another one’s statement is not held up', async () => {
    const store = await openStore();
    const hold = await holdWriter(store);
    let secondRead!: () => void;
    const secondHasRead = new Promise<void>((resolve) => (secondRead = resolve));
    const timeout = new Promise<'serial'>((resolve) => setTimeout(() => resolve('serial'), 3_000));
    const first = store.transaction(async (tx) => {
      await tx.records.put('pair', 'a', 1);
      // One after another, the second write would start only after this one ended.
      return Promise.race([secondHasRead.then(() => 'together' as const), timeout]);
    }, KEYED);
    const second = store.transaction(async (tx) => {
      await tx.records.get('pair', 'b');
      secondRead();
      await tx.records.put('pair', 'b', 2);
    }, KEYED);
    await hold.release();
    expect(await first).toBe('together');
    await second;
    const stored = await store.read((tx) => tx.records.list<number>('pair'));
    expect(stored.map((r) => [r.key, r.value])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  it('two writes of one group on the same row run one after another, losing no update', async () => {
    const store = await openStore();
    const hold = await holdWriter(store);
    const before = store.commits.conflicts;
    const increments = Array.from({ length: 6 }, () =>
      store.transaction(async (tx) => {
        const current = (await tx.records.get<number>('count', 'n'))?.value ?? 0;
        // Each write yields between its read and its write, so running at once they would interleave.
        await new Promise((r) => setTimeout(r, 5));
        await tx.records.put('count', 'n', current + 1);
      }, KEYED),
    );
    await hold.release();
    await Promise.all(increments);
    const stored = await store.read((tx) => tx.records.get<number>('count', 'n'));
    expect(stored?.value).toBe(6);
    expect(store.commits.conflicts).toBeGreaterThan(before);
  });

  it('a write whose statement fails on the server is answered with that error; the others of its group commit', async () => {
    const store = await openStore();
    const hold = await holdWriter(store);
    const writes = Array.from({ length: 5 }, (_, i) =>
      store.transaction(async (tx) => {
        // PostgreSQL text cannot hold NUL: this key fails on the server and aborts the transaction.
        await tx.records.put('mixed', i === 2 ? 'bad\u0000key' : `k${i}`, i);
        await tx.records.put('mixed', `after${i}`, i);
        return i;
      }, KEYED),
    );
    await hold.release();
    const results = await Promise.allSettled(writes);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const failed = results[2] as PromiseRejectedResult;
    expect((failed.reason as pg.DatabaseError).code).toBe('22021');
    const stored = await store.read((tx) => tx.records.list<number>('mixed'));
    expect(stored.map((r) => r.key).sort()).toEqual(
      ['after0', 'after1', 'after3', 'after4', 'k0', 'k1', 'k3', 'k4'].sort(),
    );
  });
  it('a row one write of the group queued is sent before another write reads it: the reader sees the write', async () => {
    const store = await openStore();
    const hold = await holdWriter(store);
    const conflicts = store.commits.conflicts;
    let firstDone!: () => void;
    const firstHasWritten = new Promise<void>((resolve) => (firstDone = resolve));
    const first = store.transaction(async (tx) => {
      // Its answer is not needed: queued, to go with the COMMIT.
      await tx.records.put('queued', 'k', 1);
      firstDone();
    }, KEYED);
    const second = store.transaction(async (tx) => {
      await tx.records.get('queued', 'other');
      await firstHasWritten;
      // The first write has finished (a turn later): this read comes after it.
      await new Promise((r) => setTimeout(r, 20));
      const seen = await tx.records.get<number>('queued', 'k');
      const listed = await tx.records.list<number>('queued');
      return { seen: seen?.value ?? null, listed: listed.map((r) => r.key) };
    }, KEYED);
    await hold.release();
    await first;
    expect(await second).toEqual({ seen: 1, listed: ['k'] });
    // Read in the same group, not by running it again one write at a time.
    expect(store.commits.conflicts).toBe(conflicts);
  });

  it('a list, whose rows are unknown, sends the queue first and sees the queued rows', async () => {
    const store = await openStore();
    const hold = await holdWriter(store);
    const write = store.transaction(async (tx) => {
      await tx.records.put('listed', 'a', 1);
      await tx.records.put('listed', 'b', 2);
      return (await tx.records.list<number>('listed')).map((r) => [r.key, r.value]);
    }, KEYED);
    await hold.release();
    expect(await write).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
  });

  it('a queued journal insert that finds its operation already there makes the group run again one write at a time: that write finds the entry, the other commits once', async () => {
    const store = await openStore();
    const entry = {
      scope: 'door',
      operationId: 'agent:x#op-1',
      digest: 'd',
      state: 'committed' as const,
      tool: 't',
      connection: 'c',
      target: null,
      receipt: { done: true },
      provenance: null,
      createdAt: 1,
      updatedAt: 1,
      expiresAt: Date.now() + 60_000,
    };
    await store.transaction((tx) => tx.journal.insert(entry), KEYED);
    const hold = await holdWriter(store);
    let runs = 0;
    const again = store.transaction(async (tx) => {
      runs += 1;
      return tx.journal.insert({ ...entry, receipt: { done: false } });
    }, KEYED);
    const other = store.transaction(async (tx) => {
      await tx.records.put('once', 'k', (await tx.records.get<number>('once', 'k'))?.value ?? 1);
      return 'ok';
    }, KEYED);
    await hold.release();
    // Queued, the insert answered "inserted" at first; run again, it finds the entry there.
    expect(await again).toMatchObject({ operationId: 'agent:x#op-1', receipt: { done: true } });
    expect(runs).toBe(2);
    expect(await other).toBe('ok');
    const stored = await store.read((tx) => tx.journal.get('door', 'agent:x#op-1'));
    expect(stored?.receipt).toEqual({ done: true });
  });
  it("a COMMIT whose answer is lost (not an error PostgreSQL sent) is the writes' answer: they are not run again", async () => {
    const store = await openStore();
    const query = pg.Client.prototype.query;
    let lost = 0;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
      this: pg.Client,
      ...args: unknown[]
    ) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
      if (lost === 0 && /COMMIT$/.test(text ?? '')) {
        lost += 1;
        // As if the connection dropped before the answer: the outcome is unknown here.
        return Promise.reject(new Error('Connection terminated unexpectedly'));
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    let runs = 0;
    const write = store.transaction(async (tx) => {
      runs += 1;
      await tx.records.put('lost', 'k', runs);
    }, KEYED);
    await expect(write).rejects.toThrow(/Connection terminated/);
    expect(runs).toBe(1);
  });
});
