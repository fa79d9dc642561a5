import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openHistory, type Reducer } from '../../src/kernel/writes/history.js';
import { memoryHistoryStorage } from '../helpers/memory-history-log.js';

type Op = { set: { key: string; value: number | null } };
type State = Record<string, number>;

// A tiny keyed map; the inverse comes from the live state.
const reducer: Reducer<State, Op> = {
  apply(state, op) {
    const { key, value } = op.set;
    if (key === 'bad') throw new Error('refused op');
    const next = { ...state };
    const prev = key in state ? state[key]! : null;
    if (value === null) delete next[key];
    else next[key] = value;
    return { state: next, inverse: { set: { key, value: prev } } };
  },
};
const set = (key: string, value: number | null): Op => ({ set: { key, value } });

// Persistence (replay, compaction, torn tail) is in the HistoryLog contract: history-log-*.test.ts.
describe('history', () => {
  it('increments the epoch on every apply, undo and redo', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    expect(await h.apply([set('a', 1)], 'a')).toBe(1);
    expect(await h.apply([set('a', 2)], 'a2')).toBe(2);
    expect(await h.undo()).toBe(3);
    expect(h.state).toEqual({ a: 1 });
    expect(await h.redo()).toBe(4);
    expect(h.state).toEqual({ a: 2 });
  });

  it('returns null at a stack boundary and changes nothing', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    expect(await h.undo()).toBeNull();
    expect(await h.redo()).toBeNull();
    expect(h.epoch).toBe(0);
    await h.apply([set('a', 1)], 'a');
    await h.undo();
    expect(await h.undo()).toBeNull();
    expect(h.epoch).toBe(2);
  });

  it('a new apply clears the redo stack', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    await h.apply([set('a', 1)], 'a');
    await h.undo();
    await h.apply([set('b', 1)], 'b');
    expect(await h.redo()).toBeNull();
  });

  it('applies a batch all or nothing, and undoes it as one step', async () => {
    const h = await openHistory({ reducer, initial: { x: 0 } as State });
    await expect(h.apply([set('a', 1), set('bad', 1)], 'batch')).rejects.toThrow('refused op');
    expect(h.state).toEqual({ x: 0 });
    expect(h.epoch).toBe(0);
    await h.apply([set('a', 1), set('b', 2), set('x', null)], 'batch');
    expect(h.state).toEqual({ a: 1, b: 2 });
    await h.undo();
    expect(h.state).toEqual({ x: 0 });
  });

  it('computes inverses from the live state, whatever a client claimed', async () => {
    const h = await openHistory({ reducer, initial: { a: 5 } as State });
    await h.apply([set('a', 9)], 'a');
    await h.undo();
    expect(h.state).toEqual({ a: 5 });
  });

  it('shows what the next undo and redo would apply, changing nothing', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    expect(h.peekUndo()).toBeNull();
    await h.apply([set('a', 1), set('b', 2)], 'ab');
    expect(h.peekUndo()).toEqual({ label: 'ab', ops: [set('b', null), set('a', null)] });
    expect(h.peekRedo()).toBeNull();
    await h.undo();
    expect(h.peekRedo()).toEqual({ label: 'ab', ops: [set('a', 1), set('b', 2)] });
    expect(h.epoch).toBe(2);
  });

  it('an undo or redo bound to an epoch the history has left is refused with versionConflict', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    await h.apply([set('a', 1)], 'a');
    await h.apply([set('b', 1)], 'b');
    const judged = h.epoch;
    expect(await h.undo()).toBe(3);
    await expect(h.undo(undefined, judged)).rejects.toMatchObject({ code: 'versionConflict' });
    expect(h.state).toEqual({ a: 1 });
    await expect(h.redo(undefined, judged)).rejects.toMatchObject({ code: 'versionConflict' });
    expect(await h.redo(undefined, h.epoch)).toBe(4);
    expect(h.state).toEqual({ a: 1, b: 1 });
  });

  it('undoing every step in any sequence of applies returns to the initial state (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.option(fc.integer(), { nil: null })),
            { minLength: 1, maxLength: 3 },
          ),
          { maxLength: 15 },
        ),
        async (steps) => {
          const initial: State = { a: 1 };
          const h = await openHistory({ reducer, initial });
          for (const step of steps)
            await h.apply(
              step.map(([k, v]) => set(k, v)),
              'step',
            );
          while ((await h.undo()) !== null);
          expect(h.state).toEqual(initial);
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('history operation tags', () => {
  it('a change tagged with a remembered operation is not made again and answers its first epoch', async () => {
    const h = await openHistory({ reducer, initial: {} as State });
    expect(await h.apply([set('a', 1)], 'a', 'op-1')).toBe(1);
    expect(await h.apply([set('a', 1)], 'a', 'op-1')).toBe(1);
    expect(await h.undo('op-2')).toBe(2);
    expect(await h.undo('op-2')).toBe(2);
    expect(await h.redo('op-3')).toBe(3);
    expect(await h.redo('op-3')).toBe(3);
    expect(h.epoch).toBe(3);
    expect(h.state).toEqual({ a: 1 });
    expect([h.epochOf('op-1'), h.epochOf('op-2'), h.epochOf('op-3')]).toEqual([1, 2, 3]);
    expect(h.epochOf('never')).toBeNull();
  });

  it('remembers tags across replay of the log and across compaction', async () => {
    const storage = memoryHistoryStorage<State, Op>();
    const first = await openHistory({ reducer, initial: {} as State, log: storage.open() });
    await first.apply([set('a', 1)], 'a', 'op-1');
    await first.undo('op-2');
    const replayed = await openHistory({ reducer, initial: {} as State, log: storage.open() });
    expect([replayed.epochOf('op-1'), replayed.epochOf('op-2')]).toEqual([1, 2]);
    await replayed.compact();
    const compacted = await openHistory({ reducer, initial: {} as State, log: storage.open() });
    expect([compacted.epochOf('op-1'), compacted.epochOf('op-2')]).toEqual([1, 2]);
    expect(await compacted.apply([set('a', 1)], 'a', 'op-1')).toBe(1);
    expect(compacted.epoch).toBe(2);
  });

  it('keeps a tag whose append triggered a compaction', async () => {
    const storage = memoryHistoryStorage<State, Op>();
    const h = await openHistory({
      reducer,
      initial: {} as State,
      log: storage.open(),
      compactEvery: 1,
    });
    await h.apply([set('a', 1)], 'a', 'op-1');
    const again = await openHistory({ reducer, initial: {} as State, log: storage.open() });
    expect(again.epochOf('op-1')).toBe(1);
  });

  it('forgets the oldest tags beyond maxOperations', async () => {
    const h = await openHistory({ reducer, initial: {} as State, maxOperations: 2 });
    for (const [i, tag] of ['op-1', 'op-2', 'op-3'].entries())
      await h.apply([set('a', i)], 'a', tag);
    expect([h.epochOf('op-1'), h.epochOf('op-2'), h.epochOf('op-3')]).toEqual([null, 2, 3]);
  });

  it('a refused change, an undo at the boundary or a failed append leaves no tag', async () => {
    let failing = false;
    const h = await openHistory({
      reducer,
      initial: {} as State,
      log: {
        load: async () => ({ snapshot: null, entries: [] }),
        append: async () => {
          if (failing) throw new Error('disk full');
        },
        compact: async () => undefined,
      },
    });
    await expect(h.apply([set('bad', 1)], 'bad', 'op-1')).rejects.toThrow('refused op');
    expect(await h.undo('op-2')).toBeNull();
    failing = true;
    await expect(h.apply([set('a', 1)], 'a', 'op-3')).rejects.toThrow('disk full');
    expect([h.epochOf('op-1'), h.epochOf('op-2'), h.epochOf('op-3')]).toEqual([null, null, null]);
    failing = false;
    expect(await h.apply([set('a', 1)], 'a', 'op-3')).toBe(1);
  });
});
