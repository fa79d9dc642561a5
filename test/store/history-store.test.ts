/**
 * The shared history log in the store (src/store/history-store.ts): the
 * HistoryLog contract on SQLite and PostgreSQL, and what sharing adds —
 * two histories on one log (two instances) build one history with one
 * epoch counter, and one catches up with what the other logged.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHistory } from '../../src/kernel/writes/history.js';
import type { Store } from '../../src/kernel/store.js';
import { createStoreHistoryLog, removeStoreHistoryLog } from '../../src/store/history-store.js';
import { createPostgresStore } from '../../src/store/postgres/index.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import {
  historyLogContract,
  reducer,
  set,
  type Op,
  type State,
} from '../kernel/history-log-contract.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

function sharedLogSuite(name: string, store: () => Store) {
  historyLogContract(`store records (${name})`, () => {
    const logName = `test/${randomUUID()}`;
    return { open: () => createStoreHistoryLog<State, Op>(store(), logName) };
  });

  describe(`shared history log (${name})`, () => {
    const pair = async (compactEvery?: number) => {
      const logName = `test/${randomUUID()}`;
      const open = () =>
        openHistory<State, Op>({
          reducer,
          initial: {},
          log: createStoreHistoryLog<State, Op>(store(), logName),
          ...(compactEvery ? { compactEvery } : {}),
        });
      return [await open(), await open()] as const;
    };

    it('changes made on two instances at once build one history with one epoch counter', async () => {
      const [a, b] = await pair();
      const epochs = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).apply([set(`k${i}`, i)], `set ${i}`)),
      );
      expect([...epochs].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      await a.sync();
      await b.sync();
      expect(a.epoch).toBe(10);
      expect(b.state).toEqual(a.state);
      expect(Object.keys(a.state)).toHaveLength(10);
    });

    it('an undo on one instance undoes the change the other made last', async () => {
      const [a, b] = await pair();
      await a.apply([set('x', 1)], 'x');
      await b.apply([set('y', 2)], 'y');
      expect(await a.undo()).toBe(3);
      await b.sync();
      expect(b.state).toEqual({ x: 1 });
    });

    it('a tagged change made on one instance is answered, not made again, on the other', async () => {
      const [a, b] = await pair();
      expect(await a.apply([set('x', 1)], 'x', 'tag-1')).toBe(1);
      expect(await b.apply([set('x', 1)], 'x', 'tag-1')).toBe(1);
      expect(b.epoch).toBe(1);
    });

    it('removing a log leaves none of its head, entries or snapshot, and keeps the other logs', async () => {
      const [gone, kept] = [`test/${randomUUID()}`, `test/${randomUUID()}`];
      for (const logName of [gone, kept]) {
        const h = await openHistory<State, Op>({
          reducer,
          initial: {},
          log: createStoreHistoryLog<State, Op>(store(), logName),
          compactEvery: 2,
        });
        for (let i = 0; i < 3; i++) await h.apply([set(`k${i}`, i)], `set ${i}`);
      }
      await removeStoreHistoryLog(store(), gone);
      const rows = (logName: string) =>
        store().read(async (tx) => [
          await tx.records.get('history.head', logName),
          await tx.records.get('history.snapshot', logName),
          (await tx.records.list('history.entry', { prefix: `${logName}/` })).length,
        ]);
      expect(await rows(gone)).toEqual([null, null, 0]);
      expect((await rows(kept)).map((r) => r !== null && r !== 0)).toEqual([true, true, true]);
    });

    it('an instance behind a compaction the other made catches up from the snapshot', async () => {
      const [a, b] = await pair(3);
      for (let i = 0; i < 7; i++) await a.apply([set(`k${i}`, i)], `set ${i}`);
      await b.sync();
      expect(b.epoch).toBe(7);
      expect(b.state).toEqual(a.state);
      expect(await b.undo()).toBe(8);
      await a.sync();
      expect(a.state).toEqual(b.state);
    });
  });
}

const dir = await mkdtemp(join(tmpdir(), 'airlock-history-store-'));
const sqlite = await createSqliteStore({ path: join(dir, 'airlock.db') });
afterAll(async () => {
  await sqlite.close();
  await rm(dir, { recursive: true, force: true });
});
sharedLogSuite('sqlite', () => sqlite);

await describeWithPostgres('shared history log on PostgreSQL', () => {
  const schema = uniqueSchema('history');
  let pg: Store | undefined;
  beforeAll(async () => {
    pg = await createPostgresStore({ url: PG_URL, schema });
  });
  afterAll(async () => {
    await pg?.close();
    await dropSchema(schema);
  });
  sharedLogSuite('postgres', () => pg!);
});
