/**
 * Group commit on SQLite (issue #16): concurrent write transactions share
 * one SQLite transaction and one fsync, each in its own savepoint, and each
 * caller is answered only after the shared COMMIT.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { GENESIS, walkChain } from '../../src/kernel/audit/audit-chain.js';
import { grant } from './fixtures.js';

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-group-'));
  store = await createSqliteStore({ path: join(dir, 'airlock.db') });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SQLite group commit', () => {
  it('commits concurrent writes together in fewer groups than writes', async () => {
    const before = { ...store.commits };
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.records.put('group', `k${i}`, i);
          await tick();
        }),
      ),
    );
    const groups = store.commits.groups - before.groups;
    expect(store.commits.writes - before.writes).toBe(40);
    expect(groups).toBeLessThan(40);
    const stored = await store.read((tx) => tx.records.list('group'));
    expect(stored).toHaveLength(40);
  });

  it('writes that arrive a few promise steps apart share one group, the first one too', async () => {
    const before = { ...store.commits };
    // Eight calls under way at once: each reaches its write a few promise
    // steps after the one before, as calls released together do.
    const call = async (i: number) => {
      for (let step = 0; step < i; step++) await Promise.resolve();
      return store.transaction((tx) => tx.records.put('gathered', `k${i}`, i));
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => call(i)));
    expect(store.commits.writes - before.writes).toBe(8);
    expect(store.commits.groups - before.groups).toBe(1);
  });

  it('a write commits while other code keeps the promise queue busy', async () => {
    let committed = false;
    const write = store
      .transaction((tx) => tx.records.put('busy', 'k', 1))
      .then(() => (committed = true));
    // Promise steps only, never a turn of the event loop: a write waiting for
    // a turn would never start (capped so that failure is an assertion, not a hang).
    let steps = 0;
    while (!committed && steps < 100_000) {
      await store.read((tx) => tx.records.get('busy', 'k'));
      steps += 1;
    }
    expect(committed).toBe(true);
    await write;
  });

  it('a lone write is committed without waiting for company', async () => {
    const before = { ...store.commits };
    await store.transaction((tx) => tx.records.put('lone', 'k', 1));
    expect(store.commits.groups - before.groups).toBe(1);
    expect(await store.read((tx) => tx.records.get('lone', 'k'))).toMatchObject({ value: 1 });
  });

  it('a failing write in a group fails alone; the others commit', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.records.put('mixed', `k${i}`, i);
          await tick();
          if (i === 4) throw new Error('write 4 changed its mind');
          return i;
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(9);
    expect(results[4]).toMatchObject({
      status: 'rejected',
      reason: { message: /changed its mind/ },
    });
    const keys = (await store.read((tx) => tx.records.list('mixed'))).map((r) => r.key);
    expect(keys).toHaveLength(9);
    expect(keys).not.toContain('k4');
  });

  it('a write whose statement failed is rolled back alone, even when it caught the error', async () => {
    const taken = grant();
    await store.transaction((tx) => tx.grants.insert(taken));
    const results = await Promise.allSettled([
      store.transaction((tx) => tx.records.put('stmt', 'before', 1)),
      store.transaction(async (tx) => {
        await tx.records.put('stmt', 'doomed', 1);
        await tx.grants.insert(taken).catch(() => undefined); // duplicate id
      }),
      store.transaction((tx) => tx.records.put('stmt', 'after', 1)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const keys = (await store.read((tx) => tx.records.list('stmt'))).map((r) => r.key);
    expect(keys.sort()).toEqual(['after', 'before']);
  });

  it('answers a write only once it is committed: a reader sees it at once', async () => {
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store
          .transaction((tx) => tx.records.put('seen', `k${i}`, i))
          .then(async () => {
            const found = await store.read((tx) => tx.records.get('seen', `k${i}`));
            expect(found?.value).toBe(i);
          }),
      ),
    );
  });

  it('rejects a transaction started inside a grouped write instead of waiting for itself', async () => {
    const results = await Promise.allSettled([
      store.transaction(async (tx) => {
        await tick();
        await tx.records.put('nest', 'a', 1);
      }),
      store.transaction(async () => {
        await store.transaction(async () => undefined);
      }),
    ]);
    expect(results[0]!.status).toBe('fulfilled');
    expect(results[1]).toMatchObject({
      status: 'rejected',
      reason: { message: /inside a transaction/ },
    });
  });

  it('a write queued before close is committed before the store closes', async () => {
    const pending = store.transaction((tx) => tx.records.put('close', 'k', 1));
    const closed = store.close();
    await pending;
    await closed;
    store = await createSqliteStore({ path: join(dir, 'airlock.db') });
    expect((await store.read((tx) => tx.records.get('close', 'k')))?.value).toBe(1);
  });
});

/** The audit entry fields an append needs. */
const auditEntry = (tool: string) => ({
  at: Date.now(),
  connection: 'test',
  door: 'ledger',
  tool,
  argsDigest: 'd',
  provenance: null,
  result: 'ok',
  durationMs: 1,
  decision: null,
  rule: null,
});

describe("SQLite audit appends follow the writer's cached chain head (issue 31)", () => {
  it('an append rolled back with its write leaves the chain intact for the next ones', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        store.transaction(async (tx) => {
          await tx.audit.append(auditEntry(`t${i}`));
          await tick();
          if (i % 3 === 1) throw new Error(`write ${i} failed after its audit append`);
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(4);
    // A lone write that fails rolls back too.
    await expect(
      store.transaction(async (tx) => {
        await tx.audit.append(auditEntry('lone'));
        throw new Error('lone write failed');
      }),
    ).rejects.toThrow(/lone write failed/);
    await store.transaction((tx) => tx.audit.append(auditEntry('after')));
    const entries = await store.read((tx) => tx.audit.list());
    expect(entries.map((e) => e.tool)).not.toContain('lone');
    expect(entries).toHaveLength(9);
    const walk = walkChain(GENESIS);
    walk.next(entries);
    expect(walk.result()).toMatchObject({ ok: true, count: 9 });
  });

  it("a group's entries are inserted together at its end, each answered with its stored id and hashes", async () => {
    const before = { ...store.commits };
    const answered = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.transaction(async (tx) => {
          const placed = await tx.audit.append(auditEntry(`g${i}`));
          await tick();
          return placed;
        }),
      ),
    );
    expect(store.commits.groups - before.groups).toBeLessThan(20);
    const stored = await store.read((tx) => tx.audit.list());
    expect(answered.every((e) => e.id > 0 && e.hash !== null)).toBe(true);
    expect(new Map(stored.map((e) => [e.id, e]))).toEqual(new Map(answered.map((e) => [e.id, e])));
  });

  it('an append by another connection on the same file is followed, not overwritten', async () => {
    await store.transaction((tx) => tx.audit.append(auditEntry('first')));
    // Another process (the CLI) appends to the same file through its own store.
    const other = await createSqliteStore({ path: join(dir, 'airlock.db') });
    try {
      await other.transaction((tx) => tx.audit.append(auditEntry('other process')));
    } finally {
      await other.close();
    }
    await store.transaction((tx) => tx.audit.append(auditEntry('third')));
    const entries = await store.read((tx) => tx.audit.list());
    expect(entries.map((e) => e.tool)).toEqual(['first', 'other process', 'third']);
    const walk = walkChain(GENESIS);
    walk.next(entries);
    expect(walk.result()).toMatchObject({ ok: true, count: 3 });
  });
});
