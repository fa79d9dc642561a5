/**
 * The reads' audit tail (audit.ts, issue 16): a read that passed by default
 * and is audited anyway is answered before its entry commits; the entries
 * of many reads commit together; nothing is lost on a clean shutdown; and
 * the tail is bounded — a read that finds it full waits for its entry.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/kernel/tool.js';
import { createAudit, type AuditRecord } from '../../src/kernel/audit/audit.js';
import type { Store, StoreTx } from '../../src/kernel/store.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openStore } from '../../src/store/open.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const look = defineTool({
  name: 'look',
  description: 'a read the owner wants audited',
  input: z.object({ at: z.number() }),
  effect: 'read',
  auditEveryCall: true,
  handler: async ({ at }) => ({ at }),
});
const change = defineTool({
  name: 'change',
  description: 'a write',
  input: z.object({}),
  effect: 'write',
  handler: async () => ({ changed: true }),
});

/** The audit rows as the store holds them (not through audit.list, which flushes the tail). */
const stored = (store: Store) => store.read((tx) => tx.audit.list({ door: 'd' }));

it('every read of an auditEveryCall tool is in the trail after a clean shutdown', async () => {
  // A long delay: only the shutdown can have written them.
  tk = await testKernel([{ name: 'd', tools: [look] }], { auditTail: { maxDelayMs: 60_000 } });
  for (let at = 0; at < 20; at++)
    expect(await tk.kernel.call('d', 'look', { at }, { connection: conn() })).toMatchObject({
      ok: true,
    });
  await tk.close();
  const { store } = await openStore({ data: tk.dir });
  try {
    const entries = await stored(store);
    expect(entries).toHaveLength(20);
    expect(entries.every((e) => e.tool === 'look' && e.result === 'ok')).toBe(true);
  } finally {
    await store.close();
  }
});

it('the reads of the tail commit together in one transaction, written on a timer', async () => {
  tk = await testKernel([{ name: 'd', tools: [look] }], { auditTail: { maxDelayMs: 20 } });
  const store = tk.kernel.store as SqliteStore;
  const before = store.commits.writes;
  for (let at = 0; at < 10; at++) await tk.kernel.call('d', 'look', { at }, { connection: conn() });
  // Answered without waiting for their entries: the store has not written them yet.
  expect(store.commits.writes).toBe(before);
  await vi.waitFor(async () => expect(await stored(tk!.kernel.store)).toHaveLength(10));
  expect(store.commits.writes - before).toBe(1);
});

it('a listing shows the reads of the tail at once', async () => {
  tk = await testKernel([{ name: 'd', tools: [look] }], { auditTail: { maxDelayMs: 60_000 } });
  await tk.kernel.call('d', 'look', { at: 1 }, { connection: conn() });
  expect(await tk.kernel.audit.list({ door: 'd' })).toMatchObject([{ tool: 'look' }]);
});

it('a read answered before a write comes before it in the trail', async () => {
  tk = await testKernel([{ name: 'd', tools: [look, change] }], {
    auditTail: { maxDelayMs: 60_000 },
  });
  await tk.kernel.call('d', 'look', { at: 1 }, { connection: conn() });
  await tk.kernel.call('d', 'change', {}, { connection: conn() });
  const entries = await stored(tk.kernel.store);
  expect(entries.map((e) => e.tool)).toEqual(['look', 'change']);
});

it('the tail is bounded: a read that finds it full waits until its entry is durable', async () => {
  // A store whose commits hang until released: nothing of the tail is durable meanwhile.
  const appended: unknown[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const store = {
    transaction: async <T>(fn: (tx: StoreTx) => Promise<T>) => {
      const value = await fn({
        audit: {
          appendMany: async (entries: object[]) =>
            entries.map((e) => (appended.push(e), { ...e, id: appended.length })),
        },
      } as never);
      await held;
      return value;
    },
  } as unknown as Store;
  const audit = createAudit({ store, tail: { maxEntries: 4, maxDelayMs: 5 } });
  const record: AuditRecord = {
    connection: 'test:1',
    door: 'd',
    tool: 'look',
    args: {},
    provenance: null,
    result: 'ok',
    durationMs: 0,
  };
  const answers = [1, 2, 3].map(() => audit.recordLater(record));
  // Within the bound: answered at once, while no entry is durable.
  expect(answers).toEqual([null, null, null]);
  // The timer sends them to the (hanging) store.
  await vi.waitFor(() => expect(appended).toHaveLength(3));
  const full = audit.recordLater(record);
  expect(full).toBeInstanceOf(Promise);
  let settled = false;
  void full!.then(() => (settled = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  expect(appended).toHaveLength(4);
  expect(settled).toBe(false);
  release();
  await full;
  // Durable again: the next read is within the bound.
  expect(audit.recordLater(record)).toBeNull();
  await audit.flush();
});
