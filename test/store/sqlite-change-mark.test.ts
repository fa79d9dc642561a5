/**
 * The SQLite store's change mark (kernel/store.ts `changeMark`, issue 31):
 * it stays while nobody else commits — this store's own commits (every
 * call's audit) leave it — and moves when another process's connection
 * commits, so the principals epoch needs no read per request and still sees
 * a revoke made by `airlock agents revoke` in another process at once; a
 * change made in this process is seen through the principals' own count.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { createPrincipals } from '../../src/kernel/authority/principals.js';
import { createEventBus } from '../../src/kernel/events/events.js';

const dir = await mkdtemp(join(tmpdir(), 'airlock-mark-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the SQLite change mark', () => {
  it('stays through reads and its own commits, and moves when another connection commits', async () => {
    const path = join(dir, 'mark.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    try {
      const first = a.changeMark!();
      await a.read((tx) => tx.records.get('x', 'y'));
      expect(a.changeMark!()).toBe(first);
      await a.transaction((tx) => tx.records.put('x', 'y', 1));
      expect(a.changeMark!()).toBe(first);
      await b.transaction((tx) => tx.records.put('x', 'z', 2));
      expect(a.changeMark!()).not.toBe(first);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a revoke committed by another process is seen on the next request', async () => {
    const path = join(dir, 'principals.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    try {
      const [busA, busB] = [await createEventBus(), await createEventBus()];
      const here = createPrincipals({ store: a, events: busA });
      const there = createPrincipals({ store: b, events: busB });
      const added = await here.addAgent('robin');
      if ('ok' in added) throw new Error(added.message);
      // Authenticated again and again: the epoch stands while nothing changes.
      for (let i = 0; i < 3; i++)
        expect(await here.authenticate(added.token)).toMatchObject({ agent: 'robin' });
      await there.revokeAgent('robin');
      expect(await here.authenticate(added.token)).toBeNull();
      await busA.close();
      await busB.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a change made through another Principals on the same store object is seen on the next request', async () => {
    const store = await createSqliteStore({ path: join(dir, 'same.db') });
    try {
      const bus = await createEventBus();
      const here = createPrincipals({ store, events: bus });
      const alsoHere = createPrincipals({ store, events: bus });
      const added = await here.addAgent('kit');
      if ('ok' in added) throw new Error(added.message);
      for (let i = 0; i < 3; i++)
        expect(await here.authenticate(added.token)).toMatchObject({ agent: 'kit' });
      // The store's mark does not move for its own commits: the revoke is seen all the same.
      const mark = store.changeMark!();
      await alsoHere.revokeAgent('kit');
      expect(store.changeMark!()).toBe(mark);
      expect(await here.authenticate(added.token)).toBeNull();
      await bus.close();
    } finally {
      await store.close();
    }
  });
});
