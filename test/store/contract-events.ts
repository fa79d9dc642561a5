import { describe, expect, it } from 'vitest';
import type { LoggedEventRow } from '../../src/kernel/store.js';
import { uid, type ContractContext } from './fixtures.js';

export function eventLogContract({ store, open }: ContractContext): void {
  describe('event log', () => {
    it('append numbers entries in order, and after(id) returns those after it, oldest first', async () => {
      const tag = uid('t');
      const rows = await store().transaction((tx) =>
        tx.events.append([1, 2, 3].map((n) => ({ at: n, data: { event: 'tick', tag, n } }))),
      );
      expect(rows.map((r) => r.data)).toEqual([1, 2, 3].map((n) => ({ event: 'tick', tag, n })));
      expect(rows[1]!.id).toBeGreaterThan(rows[0]!.id);
      expect(rows[2]!.id).toBeGreaterThan(rows[1]!.id);
      const after = await store().read((tx) => tx.events.after(rows[0]!.id, 10));
      expect(after.slice(0, 2)).toEqual(rows.slice(1));
      const bounds = await store().read((tx) => tx.events.bounds());
      expect(bounds.last).toBeGreaterThanOrEqual(rows[2]!.id);
      expect(bounds.first).toBeLessThanOrEqual(rows[0]!.id);
    });

    it('a large append keeps its order: each entry gets the id it is read back under', async () => {
      const entries = Array.from({ length: 250 }, (_, n) => ({
        at: n,
        data: { event: 'bulk', n },
      }));
      const rows = await store().transaction((tx) => tx.events.append(entries));
      expect(rows.map((r) => r.data)).toEqual(entries.map((e) => e.data));
      const back = await store().read((tx) => tx.events.after(rows[0]!.id - 1, 250));
      expect(back).toEqual(rows);
    });

    it('prune drops entries up to an id; ids are never reused after it', async () => {
      const rows = await store().transaction((tx) =>
        tx.events.append([
          { at: 1, data: { event: 'a' } },
          { at: 2, data: { event: 'b' } },
        ]),
      );
      await store().transaction((tx) => tx.events.prune(rows[1]!.id));
      expect(await store().read((tx) => tx.events.bounds())).toEqual({ first: null, last: 0 });
      const [next] = await store().transaction((tx) =>
        tx.events.append([{ at: 3, data: { event: 'c' } }]),
      );
      expect(next!.id).toBeGreaterThan(rows[1]!.id);
    });

    it('concurrent appenders on two connections commit in id order: a reader polling after(last) misses none', async () => {
      // Two SQLite connections in one process would wait on each other's lock
      // synchronously; there the second appender shares the connection.
      const other = store().kind === 'sqlite' ? store() : await open();
      try {
        const start = await store().read((tx) => tx.events.bounds());
        const appendMany = (s: typeof other, who: string) =>
          Promise.all(
            Array.from({ length: 15 }, (_, n) =>
              s.transaction((tx) => tx.events.append([{ at: n, data: { event: 'e', who, n } }])),
            ),
          );
        const seen: LoggedEventRow[] = [];
        let done = false;
        const reader = (async () => {
          let last = start.last;
          for (;;) {
            // Whether every appender had committed before this read began.
            const finished = done;
            const rows = await store().read((tx) => tx.events.after(last, 100));
            for (const r of rows) {
              seen.push(r);
              last = r.id;
            }
            if (finished && rows.length === 0) break;
          }
        })();
        const written = (await Promise.all([appendMany(store(), 'a'), appendMany(other, 'b')]))
          .flat(2)
          .sort((x, y) => x.id - y.id);
        done = true;
        await reader;
        expect(seen.map((r) => r.id)).toEqual(written.map((r) => r.id));
      } finally {
        if (other !== store()) await other.close();
      }
    });
  });
}
