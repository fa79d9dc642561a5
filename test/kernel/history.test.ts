import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { openHistory, type Reducer } from '../../src/kernel/history.js';
import { createFileHistoryLog } from '../../src/store/history-file.js';

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

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-history-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

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

  it('replays the fsynced op log on open, including undo and redo', async () => {
    const dir = tempDir();
    const h = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    await h.apply([set('a', 1)], 'a');
    await h.apply([set('b', 2)], 'b');
    await h.undo();
    const again = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    expect(again.epoch).toBe(3);
    expect(again.state).toEqual({ a: 1 });
    expect(await again.redo()).toBe(4);
    expect(again.state).toEqual({ a: 1, b: 2 });
  });

  it('compacts into a snapshot and truncates the log, replaying to the same state', async () => {
    const dir = tempDir();
    const h = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
      compactEvery: 3,
    });
    for (let i = 0; i < 7; i++) await h.apply([set(`k${i}`, i)], `k${i}`);
    const log = readFileSync(join(dir, 'oplog.jsonl'), 'utf8').trim().split('\n').filter(Boolean);
    expect(log.length).toBe(1); // 7 entries, compacted after 3 and 6
    const again = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    expect(again.state).toEqual(h.state);
    expect(again.epoch).toBe(7);
    await again.undo();
    expect(again.state).not.toHaveProperty('k6');
  });

  it('ignores a torn last line from a crash mid-append and keeps appending after it', async () => {
    const dir = tempDir();
    const h = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    await h.apply([set('a', 1)], 'a');
    appendFileSync(join(dir, 'oplog.jsonl'), '{"epoch":2,"type":"app');
    const again = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    expect(again.state).toEqual({ a: 1 });
    await again.apply([set('b', 2)], 'b');
    const third = await openHistory({
      reducer,
      initial: {} as State,
      log: createFileHistoryLog<State, Op>(dir),
    });
    expect(third.state).toEqual({ a: 1, b: 2 });
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
