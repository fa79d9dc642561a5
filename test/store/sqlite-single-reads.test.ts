/**
 * Single-statement reads on SQLite (issue 31, single-reads.ts): on the
 * writer connection while it has no transaction open — its page cache
 * survives its own commits — and on a reader while a write group is open,
 * whose uncommitted rows they must never see.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.js';
import { ONE_STATEMENT } from '../../src/kernel/store.js';

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-single-'));
  store = await createSqliteStore({ path: join(dir, 'airlock.db') });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** A promise and the function that settles it. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const readK = () => store.read((tx) => tx.records.get<number>('single', 'k'), ONE_STATEMENT);

describe('SQLite single-statement reads', () => {
  it('a single-statement read runs on the idle writer and sees the latest commit', async () => {
    await store.transaction((tx) => tx.records.put('single', 'k', 1));
    const before = { ...store.singleReads };
    expect((await readK())?.value).toBe(1);
    await store.transaction((tx) => tx.records.put('single', 'k', 2));
    expect((await readK())?.value).toBe(2);
    expect(store.singleReads.onWriter - before.onWriter).toBe(2);
    expect(store.singleReads.onReaders - before.onReaders).toBe(0);
  });

  it('a single-statement read while a write group is open runs on a reader and does not see its uncommitted rows', async () => {
    await store.transaction((tx) => tx.records.put('single', 'k', 1));
    const held = gate();
    const written = gate();
    const writing = store.transaction(async (tx) => {
      await tx.records.put('single', 'k', 2);
      written.open();
      await held.opened; // the group stays open, its row uncommitted
    });
    await written.opened;
    const before = { ...store.singleReads };
    try {
      expect((await readK())?.value).toBe(1);
      expect(store.singleReads.onReaders - before.onReaders).toBe(1);
      expect(store.singleReads.onWriter - before.onWriter).toBe(0);
    } finally {
      held.open();
      await writing;
    }
    expect((await readK())?.value).toBe(2);
  });

  it('a statement that writes, sent as a single-statement read, is refused and writes nothing', async () => {
    await expect(
      store.read((tx) => tx.records.put('single', 'sneaked', 1), ONE_STATEMENT),
    ).rejects.toThrow();
    expect(await store.read((tx) => tx.records.get('single', 'sneaked'), ONE_STATEMENT)).toBeNull();
  });

  it('close waits for a single-statement read in flight, which still answers on the writer', async () => {
    await store.transaction((tx) => tx.records.put('single', 'k', 7));
    const before = { ...store.singleReads };
    const reading = store.read(async (tx) => {
      // Long enough for a close that did not wait to have closed the writer.
      await new Promise((resolve) => setTimeout(resolve, 50));
      return tx.records.get<number>('single', 'k');
    }, ONE_STATEMENT);
    const closing = store.close();
    expect((await reading)?.value).toBe(7);
    expect(store.singleReads.onWriter - before.onWriter).toBe(1);
    await closing;
  });
});
