/**
 * The SQLite store's change mark (kernel/store.ts `changeMark`, issue 31):
 * it stays while nothing is committed, and moves on any commit — this
 * store's own writer or another process's connection on the same file — so
 * the principals epoch needs no read per request and still sees a revoke
 * made by `airlock agents revoke` in another process at once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { createPrincipals } from '../../src/kernel/principals.js';
import { createEventBus } from '../../src/kernel/events.js';

const dir = await mkdtemp(join(tmpdir(), 'airlock-mark-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the SQLite change mark', () => {
  it('stays while nothing is committed and moves on every commit, its own or another connection’s', async () => {
    const path = join(dir, 'mark.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    try {
      const first = a.changeMark!();
      await a.read((tx) => tx.records.get('x', 'y'));
      expect(a.changeMark!()).toBe(first);
      await a.transaction((tx) => tx.records.put('x', 'y', 1));
      const afterOwn = a.changeMark!();
      expect(afterOwn).not.toBe(first);
      await b.transaction((tx) => tx.records.put('x', 'z', 2));
      expect(a.changeMark!()).not.toBe(afterOwn);
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
});
