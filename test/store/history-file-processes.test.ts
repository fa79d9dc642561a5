/**
 * The file history log shared by processes (issue 36 item 4): appends from
 * several real processes under `oplog.lock` build one log with one epoch
 * counter; a lock held past the wait answers `unavailable`, and a lock
 * whose holder is SIGKILLed is released by the OS; a compaction covers only
 * what its maker read; a torn tail is skipped by readers and cut by the
 * next append. The child processes run the built dist/ (`npm run build`).
 */
import { afterAll, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileHistoryLog } from '../../src/store/history-file.js';
import { openHistory, type LogEntry } from '../../src/kernel/writes/history.js';
import { AirlockError } from '../../src/kernel/errors.js';
import { waitForOutput } from '../helpers/wait.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const dirs: string[] = [];
const folder = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-histfile-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type State = Record<string, number>;
type Op = { set: { key: string; value: number } };
const reducer = {
  apply: (s: State, op: Op) => ({
    state: { ...s, [op.set.key]: op.set.value },
    inverse: { set: { key: op.set.key, value: s[op.set.key] ?? 0 } },
  }),
};

/** A child process running `source` as an ES module (dist/ imports), its output collected. */
function child(source: string) {
  const p = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
  return { p, out: () => out, exited };
}

const writer = (dir: string, tag: string, n: number) =>
  child(`
    import { createFileHistoryLog } from ${JSON.stringify(join(DIST, 'store/history-file.js'))};
    import { openHistory } from ${JSON.stringify(join(DIST, 'kernel/writes/history.js'))};
    const reducer = { apply: (s, op) => ({ state: { ...s, [op.set.key]: op.set.value }, inverse: { set: { key: op.set.key, value: s[op.set.key] ?? 0 } } }) };
    const log = createFileHistoryLog(${JSON.stringify(dir)});
    const h = await openHistory({ reducer, initial: {}, log, compactEvery: 7 });
    const epochs = await Promise.all(Array.from({ length: ${n} }, (_, i) =>
      h.apply([{ set: { key: '${tag}' + i, value: i } }], '${tag}' + i)));
    console.log(JSON.stringify(epochs));
    log.close();
  `);

it('appends from two processes build one log: every change once, one epoch counter, compactions keep them all', async () => {
  const dir = folder();
  const n = 40;
  const a = writer(dir, 'a', n);
  const b = writer(dir, 'b', n);
  expect(await a.exited, a.out()).toBe(0);
  expect(await b.exited, b.out()).toBe(0);
  const epochs = [...JSON.parse(a.out()), ...JSON.parse(b.out())] as number[];
  expect(epochs.sort((x, y) => x - y)).toEqual(Array.from({ length: 2 * n }, (_, i) => i + 1));
  const log = createFileHistoryLog<State, Op>(dir);
  const h = await openHistory<State, Op>({ reducer, initial: {}, log });
  expect(h.epoch).toBe(2 * n);
  expect(Object.keys(h.state)).toHaveLength(2 * n);
  log.close();
});

it('an append waits for a lock another process holds, answers unavailable past the wait, and goes on once the holder is SIGKILLed', async () => {
  const dir = folder();
  const log = createFileHistoryLog<State, Op>(dir, { lockWaitMs: 300 });
  await log.append({ epoch: 1, type: 'apply', ops: [], label: 'one' });
  const holder = child(`
    import Database from 'better-sqlite3';
    const db = new Database(${JSON.stringify(join(dir, 'oplog.lock'))}, { timeout: 0 });
    db.exec('BEGIN EXCLUSIVE');
    console.log('held');
    setInterval(() => undefined, 1000);
  `);
  // better-sqlite3 resolves from this repository's node_modules.
  await waitForOutput(holder.out, /held/, { timeoutMs: 10_000 });
  const started = Date.now();
  const refused = await log
    .append({ epoch: 2, type: 'apply', ops: [], label: 'two' })
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(AirlockError);
  expect((refused as AirlockError).code).toBe('unavailable');
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  holder.p.kill('SIGKILL');
  await holder.exited;
  await log.append({ epoch: 2, type: 'apply', ops: [], label: 'two' });
  expect((await log.load()).entries.map((e) => e.epoch)).toEqual([1, 2]);
  log.close();
});

it('an append whose epoch was taken answers a HistoryConflict, and nothing is written', async () => {
  const dir = folder();
  const first = createFileHistoryLog<State, Op>(dir);
  const second = createFileHistoryLog<State, Op>(dir);
  await first.append({ epoch: 1, type: 'apply', ops: [], label: 'one' });
  await expect(second.append({ epoch: 1, type: 'apply', ops: [], label: 'late' })).rejects.toThrow(
    /Epoch 1 was taken/,
  );
  expect((await second.since(0)).entries.map((e) => (e as { label: string }).label)).toEqual([
    'one',
  ]);
  first.close();
  second.close();
});

it('a compaction covers only what its maker read: a snapshot behind the log is not written', async () => {
  const dir = folder();
  const ahead = createFileHistoryLog<State, Op>(dir);
  const behind = createFileHistoryLog<State, Op>(dir);
  for (let epoch = 1; epoch <= 3; epoch++)
    await ahead.append({
      epoch,
      type: 'apply',
      ops: [{ set: { key: `k${epoch}`, value: epoch } }],
      label: `k${epoch}`,
    });
  await behind.compact({ epoch: 2, state: { k1: 1, k2: 2 }, undo: [], redo: [] });
  const loaded = await createFileHistoryLog<State, Op>(dir).load();
  expect(loaded.snapshot).toBeNull();
  expect(loaded.entries.map((e) => e.epoch)).toEqual([1, 2, 3]);
  // The maker at the head compacts; a reader at epoch 1 then gets the snapshot from since.
  await ahead.compact({ epoch: 3, state: { k1: 1, k2: 2, k3: 3 }, undo: [], redo: [] });
  const caught = await behind.since(1);
  expect(caught.snapshot?.epoch).toBe(3);
  expect(caught.entries).toEqual([]);
  ahead.close();
  behind.close();
});

it('a torn last line is skipped by readers and cut by the next append under the lock', async () => {
  const dir = folder();
  const log = createFileHistoryLog<State, Op>(dir);
  await log.append({ epoch: 1, type: 'apply', ops: [], label: 'one' });
  appendFileSync(join(dir, 'oplog.jsonl'), '{"epoch":2,"type":"app');
  expect((await log.since(0)).entries.map((e) => e.epoch)).toEqual([1]);
  await log.append({ epoch: 2, type: 'apply', ops: [], label: 'two' });
  const lines = readFileSync(join(dir, 'oplog.jsonl'), 'utf8').trim().split('\n');
  expect(lines.map((l) => (JSON.parse(l) as LogEntry<Op>).epoch)).toEqual([1, 2]);
  log.close();
});

it('a folder whose name holds a lone surrogate (as fs writes it) takes appends and compactions', async () => {
  // A project path an agent may send; fs makes the folder with U+FFFD in its place.
  const dir = join(folder(), 'x\uD800y');
  const log = createFileHistoryLog<State, Op>(dir);
  await log.append({ epoch: 1, type: 'apply', ops: [], label: 'one' });
  await log.compact({ epoch: 1, state: { n: 1 } } as never);
  log.close();
});

it('a folder deleted while its log is open answers notFound on append, and compaction skips it', async () => {
  const dir = join(folder(), 'gone');
  const log = createFileHistoryLog<State, Op>(dir);
  rmSync(dir, { recursive: true, force: true });
  const refused = await log
    .append({ epoch: 1, type: 'apply', ops: [], label: 'one' })
    .catch((e: unknown) => e);
  expect((refused as AirlockError).code).toBe('notFound');
  await expect(log.compact({ epoch: 0 } as never)).resolves.toBeUndefined();
  log.close();
});
