import { afterEach, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openHistory, type Reducer } from '../../src/kernel/writes/history.js';
import { createFileHistoryLog } from '../../src/store/history-file.js';
import { historyLogContract, type Op, type State } from './history-log-contract.js';

const folder = () => mkdtempSync(join(tmpdir(), 'airlock-history-'));

historyLogContract('file (oplog.jsonl + snapshot.json)', () => {
  const dir = folder();
  return {
    open: () => createFileHistoryLog<State, Op>(dir),
    // The file log promises to drop a torn last line (see src/store/history-file.ts).
    tearTail: () => appendFileSync(join(dir, 'oplog.jsonl'), '{"epoch":2,"type":"app'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
});

// What only the file log does: its files.
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const reducer: Reducer<State, Op> = {
  apply(state, op) {
    const { key, value } = op.set;
    const next = { ...state };
    if (value === null) delete next[key];
    else next[key] = value;
    return { state: next, inverse: { set: { key, value: state[key] ?? null } } };
  },
};

it('file log: compaction truncates oplog.jsonl to the entries since the last snapshot', async () => {
  const dir = folder();
  dirs.push(dir);
  const log = createFileHistoryLog<State, Op>(dir);
  const h = await openHistory({ reducer, initial: {} as State, log, compactEvery: 3 });
  for (let i = 0; i < 7; i++) await h.apply([{ set: { key: `k${i}`, value: i } }], `k${i}`);
  log.close();
  const lines = readFileSync(join(dir, 'oplog.jsonl'), 'utf8').split('\n').filter(Boolean);
  expect(lines.map((l) => (JSON.parse(l) as { epoch: number }).epoch)).toEqual([7]); // compacted after 3 and 6
  expect(JSON.parse(readFileSync(join(dir, 'snapshot.json'), 'utf8'))).toMatchObject({ epoch: 6 });
});

it('file log: a whole last entry missing only its newline is kept, and the next append starts a new line', async () => {
  const dir = folder();
  dirs.push(dir);
  const entry = { epoch: 1, type: 'apply', ops: [{ set: { key: 'a', value: 1 } }], label: 'a' };
  writeFileSync(join(dir, 'oplog.jsonl'), JSON.stringify(entry));
  const log = createFileHistoryLog<State, Op>(dir);
  expect((await log.load()).entries).toEqual([entry]);
  await log.append({ epoch: 2, type: 'undo' });
  log.close();
  const again = createFileHistoryLog<State, Op>(dir);
  expect((await again.load()).entries).toEqual([entry, { epoch: 2, type: 'undo' }]);
  again.close();
});
