/**
 * The one behaviour suite every HistoryLog passes (src/kernel/writes/history.ts):
 * what is appended or compacted is what a log opened later on the same
 * storage loads, and a history opened on it replays to the same place.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  openHistory,
  type HistoryLog,
  type HistorySnapshot,
  type LogEntry,
  type Reducer,
} from '../../src/kernel/writes/history.js';

export type Op = { set: { key: string; value: number | null } };
export type State = Record<string, number>;

/** One place a log keeps its data (a folder, say); every `open()` opens a log on it, as after a restart. */
export interface LogStorage {
  open(): HistoryLog<State, Op> & { close?(): void };
  /**
   * Leaves a partly written entry at the end, as a crash in the middle of an
   * append would. Only for implementations that promise to repair that.
   */
  tearTail?(): void;
  cleanup?(): void;
}

// A tiny keyed map; the inverse comes from the live state.
export const reducer: Reducer<State, Op> = {
  apply(state, op) {
    const { key, value } = op.set;
    const next = { ...state };
    const prev = key in state ? state[key]! : null;
    if (value === null) delete next[key];
    else next[key] = value;
    return { state: next, inverse: { set: { key, value: prev } } };
  },
};
export const set = (key: string, value: number | null): Op => ({ set: { key, value } });

export function historyLogContract(name: string, storage: () => LogStorage): void {
  describe(`HistoryLog contract: ${name}`, () => {
    const used: LogStorage[] = [];
    const logs: { close?(): void }[] = [];
    afterEach(() => {
      for (const log of logs.splice(0)) log.close?.();
      for (const s of used.splice(0)) s.cleanup?.();
    });
    const fresh = () => {
      const s = storage();
      used.push(s);
      return s;
    };
    const open = (s: LogStorage) => {
      const log = s.open();
      logs.push(log);
      return log;
    };
    const history = (s: LogStorage, compactEvery?: number) =>
      openHistory({
        reducer,
        initial: {} as State,
        log: open(s),
        ...(compactEvery ? { compactEvery } : {}),
      });

    const entries: LogEntry<Op>[] = [
      { epoch: 1, type: 'apply', ops: [set('a', 1), set('b', 2)], label: 'two keys' },
      { epoch: 2, type: 'undo' },
      { epoch: 3, type: 'redo' },
      { epoch: 4, type: 'apply', ops: [set('a', null)], label: 'drop a' },
    ];
    const snapshot: HistorySnapshot<State, Op> = {
      epoch: 4,
      state: { b: 2 },
      undo: [{ label: 'drop a', ops: [set('a', null)], inverses: [set('a', 1)] }],
      redo: [],
    };

    it('a log on new storage loads no snapshot and no entries', async () => {
      expect(await open(fresh()).load()).toEqual({ snapshot: null, entries: [] });
    });

    it('a log opened later loads every appended entry, in append order', async () => {
      const s = fresh();
      const log = open(s);
      for (const e of entries) await log.append(e);
      expect(await open(s).load()).toEqual({ snapshot: null, entries });
    });

    it('keeps an entry as it was appended, whatever the caller changes afterwards', async () => {
      const s = fresh();
      const entry: LogEntry<Op> = { epoch: 1, type: 'apply', ops: [set('a', 1)], label: 'a' };
      await open(s).append(entry);
      entry.ops.push(set('b', 2));
      expect((await open(s).load()).entries).toEqual([
        { epoch: 1, type: 'apply', ops: [set('a', 1)], label: 'a' },
      ]);
    });

    it('after compact, a log opened later loads the snapshot and no entry it covers', async () => {
      const s = fresh();
      const log = open(s);
      for (const e of entries) await log.append(e);
      await log.compact(structuredClone(snapshot));
      const loaded = await open(s).load();
      expect(loaded.snapshot).toEqual(snapshot);
      expect(loaded.entries.filter((e) => e.epoch <= snapshot.epoch)).toEqual([]);
    });

    it('appends after compact come back after the snapshot', async () => {
      const s = fresh();
      const log = open(s);
      for (const e of entries) await log.append(e);
      await log.compact(structuredClone(snapshot));
      const later: LogEntry<Op>[] = [
        { epoch: 5, type: 'apply', ops: [set('c', 3)], label: 'c' },
        { epoch: 6, type: 'undo' },
      ];
      for (const e of later) await log.append(e);
      const loaded = await open(s).load();
      expect(loaded.snapshot).toEqual(snapshot);
      expect(loaded.entries.filter((e) => e.epoch > snapshot.epoch)).toEqual(later);
    });

    it('keeps a snapshot as it was compacted, whatever the caller changes afterwards', async () => {
      const s = fresh();
      const given = structuredClone(snapshot);
      await open(s).compact(given);
      given.state.z = 26;
      given.undo.length = 0;
      expect((await open(s).load()).snapshot).toEqual(snapshot);
    });

    it('a history reopened on the log replays applies, undos and redos to the same epoch and state', async () => {
      const s = fresh();
      const h = await history(s);
      await h.apply([set('a', 1)], 'a');
      await h.apply([set('b', 2)], 'b');
      await h.undo();
      const again = await history(s);
      expect(again.epoch).toBe(3);
      expect(again.state).toEqual({ a: 1 });
      expect(again.canRedo()).toBe(true);
      expect(await again.redo()).toBe(4);
      expect(again.state).toEqual({ a: 1, b: 2 });
    });

    it('a history compacting as it goes reopens to the same state, and its undo stack survives', async () => {
      const s = fresh();
      const h = await history(s, 3);
      for (let i = 0; i < 7; i++) await h.apply([set(`k${i}`, i)], `k${i}`);
      const again = await history(s);
      expect(again.epoch).toBe(7);
      expect(again.state).toEqual(h.state);
      for (let i = 6; i >= 0; i--) {
        await again.undo();
        expect(again.state).not.toHaveProperty(`k${i}`);
      }
      expect(again.state).toEqual({});
      expect(again.canUndo()).toBe(false);
    });

    it('after a crash mid-append, loads the whole entries and keeps appending after them (where promised)', async (ctx) => {
      const s = fresh();
      if (!s.tearTail) return ctx.skip();
      const h = await history(s);
      await h.apply([set('a', 1)], 'a');
      s.tearTail();
      expect((await open(s).load()).entries).toEqual([
        { epoch: 1, type: 'apply', ops: [set('a', 1)], label: 'a' },
      ]);
      const again = await history(s);
      expect(again.state).toEqual({ a: 1 });
      await again.apply([set('b', 2)], 'b');
      const third = await history(s);
      expect(third.epoch).toBe(2);
      expect(third.state).toEqual({ a: 1, b: 2 });
    });
  });
}
