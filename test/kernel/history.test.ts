import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openHistory, type Reducer } from '../../src/kernel/history.js';

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
