/**
 * The SQLite store's change mark (kernel/store.ts `changeMark`, issue 31):
 * it stays while nobody else commits — this store's own commits (every
 * call's audit) leave it — and moves when another process's connection
 * commits, so the principals epoch needs no read per request and still sees
 * a revoke made by `airlock agents revoke` in another process at once; a
 * change made in this process is seen through the principals' own count.
 * The owner's policy keeps its view the same way (issue 26): `airlock policy`
 * in another process is applied on the next call, with no 1-second wait.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { createPrincipals } from '../../src/kernel/authority/principals.js';
import { createEventBus } from '../../src/kernel/events/events.js';
import { createPolicy, type PolicyCall } from '../../src/kernel/authority/policy.js';
import type { Store } from '../../src/kernel/store.js';
import { createChangeMark, shmHeaderReader } from '../../src/store/sqlite/change-mark.js';

const dir = await mkdtemp(join(tmpdir(), 'airlock-mark-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the SQLite change mark', () => {
  it('stays through reads and its own commits, and moves when another connection commits', async () => {
    const path = join(dir, 'mark.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    try {
      const first = a.changeMark!();
      await a.read((tx) => tx.records.get('x', 'y'));
      expect(a.changeMark!()).toBe(first);
      await a.transaction((tx) => tx.records.put('x', 'y', 1));
      expect(a.changeMark!()).toBe(first);
      await b.transaction((tx) => tx.records.put('x', 'z', 2));
      expect(a.changeMark!()).not.toBe(first);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('is read once per turn of the event loop: a commit elsewhere is seen from the next turn', async () => {
    const path = join(dir, 'turn.db');
    const a = await createSqliteStore({ path });
    try {
      const before = a.changeMark!();
      // Another process's commit, made synchronously within this turn.
      const Database = (await import('better-sqlite3')).default;
      const other = new Database(path);
      other.exec('CREATE TABLE IF NOT EXISTS elsewhere (n); INSERT INTO elsewhere VALUES (1)');
      other.close();
      expect(a.changeMark!(), 'the same turn keeps the mark it read').toBe(before);
      await new Promise((r) => setImmediate(r));
      expect(a.changeMark!(), 'the next turn sees the commit').not.toBe(before);
    } finally {
      await a.close();
    }
  });

  it('a revoke committed by another process is seen on the next request', async () => {
    const path = join(dir, 'principals.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    try {
      const [busA, busB] = [await createEventBus(), await createEventBus()];
      const here = createPrincipals({ store: a, events: busA });
      const there = createPrincipals({ store: b, events: busB });
      const added = await here.addAgent('robin');
      if ('ok' in added) throw new Error(added.message);
      // Authenticated again and again: the epoch stands while nothing changes.
      for (let i = 0; i < 3; i++)
        expect(await here.authenticate(added.token)).toMatchObject({ agent: 'robin' });
      await there.revokeAgent('robin');
      expect(await here.authenticate(added.token)).toBeNull();
      await busA.close();
      await busB.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a change made through another Principals on the same store object is seen on the next request', async () => {
    const store = await createSqliteStore({ path: join(dir, 'same.db') });
    try {
      const bus = await createEventBus();
      const here = createPrincipals({ store, events: bus });
      const alsoHere = createPrincipals({ store, events: bus });
      const added = await here.addAgent('kit');
      if ('ok' in added) throw new Error(added.message);
      for (let i = 0; i < 3; i++)
        expect(await here.authenticate(added.token)).toMatchObject({ agent: 'kit' });
      // The store's mark does not move for its own commits: the revoke is seen all the same.
      const mark = store.changeMark!();
      await alsoHere.revokeAgent('kit');
      expect(store.changeMark!()).toBe(mark);
      expect(await here.authenticate(added.token)).toBeNull();
      await bus.close();
    } finally {
      await store.close();
    }
  });
});

const write: PolicyCall = {
  door: 'ledger',
  mount: 'ledger',
  tool: 'ledger_append',
  agent: 'robin',
  effect: 'write',
  targets: [],
};

/** A store whose policy reads are counted, to see when a view is read again. */
function counted(store: Store): { store: Store; reads: () => number } {
  let reads = 0;
  return {
    store: {
      ...store,
      read: (fn, options) => {
        reads++;
        return store.read(fn, options);
      },
    },
    reads: () => reads,
  };
}

describe('the policy view on the SQLite change mark', () => {
  // The clock never moves: only the change mark can make a view stale.
  const frozen = () => 1_000_000;

  it('a policy written by another store on the same file is applied on the next call', async () => {
    const path = join(dir, 'policy.db');
    const a = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    const [busA, busB] = [await createEventBus(), await createEventBus()];
    try {
      const here = createPolicy({ store: a, events: busA, now: frozen });
      const there = createPolicy({ store: b, events: busB, now: frozen });
      expect((await here.decide(write)).decision).toBe('allow');
      await there.setReadOnly(true);
      expect(await here.decide(write)).toMatchObject({ decision: 'deny', rule: 'readOnly' });
      const added = await there.add({ tool: 'ledger_append', decision: 'ask' });
      await there.setReadOnly(false);
      expect(await here.decide(write)).toMatchObject({
        decision: 'ask',
        rule: (added as { id: string }).id,
      });
    } finally {
      await busA.close();
      await busB.close();
      await a.close();
      await b.close();
    }
  });

  it('the view stands, unread, while nobody commits', async () => {
    const path = join(dir, 'policy-stands.db');
    const a = counted(await createSqliteStore({ path }));
    const bus = await createEventBus();
    try {
      const here = createPolicy({ store: a.store, events: bus, now: frozen });
      await here.decide(write);
      const reads = a.reads();
      // This store's own commits (every call's audit) leave the mark, so the view stands.
      await a.store.transaction((tx) => tx.records.put('x', 'y', 1));
      for (let i = 0; i < 3; i++) await here.decide(write);
      expect(a.reads()).toBe(reads);
    } finally {
      await bus.close();
      await a.store.close();
    }
  });

  it('an edit through another Policy on the same store object is seen on the next call', async () => {
    const store = await createSqliteStore({ path: join(dir, 'policy-same.db') });
    // Two buses: the policyChanged event does not reach `here`; the process's edit count does.
    const [busA, busB] = [await createEventBus(), await createEventBus()];
    try {
      const here = createPolicy({ store, events: busA, now: frozen });
      const alsoHere = createPolicy({ store, events: busB, now: frozen });
      expect((await here.decide(write)).decision).toBe('allow');
      const mark = store.changeMark!();
      await alsoHere.setReadOnly(['ledger']);
      expect(store.changeMark!()).toBe(mark);
      expect(await here.decide(write)).toMatchObject({ decision: 'deny', rule: 'readOnly' });
    } finally {
      await busA.close();
      await busB.close();
      await store.close();
    }
  });

  it('a store without a change mark keeps a view for one second', async () => {
    const path = join(dir, 'policy-unmarked.db');
    const sqlite = await createSqliteStore({ path });
    const b = await createSqliteStore({ path });
    const busA = await createEventBus();
    let clock = 1_000_000;
    try {
      const unmarked: Store = { ...sqlite, changeMark: () => null };
      const here = createPolicy({ store: unmarked, events: busA, now: () => clock });
      expect((await here.decide(write)).decision).toBe('allow');
      // Another process's edit: the policy record written on another connection.
      await b.transaction((tx) => tx.records.put('policy', 'owner', { readOnly: true, rules: [] }));
      clock += 999;
      expect((await here.decide(write)).decision).toBe('allow');
      clock += 1;
      expect((await here.decide(write)).decision).toBe('deny');
    } finally {
      await busA.close();
      await sqlite.close();
      await b.close();
    }
  });
});

describe('the change mark asks SQLite only when the WAL-index header changed', () => {
  const nextTurn = () => new Promise((r) => setImmediate(r));

  /** A writer connection in WAL mode and a mark over it whose `data_version` questions are counted. */
  async function opened(name: string, header = true) {
    const Database = (await import('better-sqlite3')).default;
    const path = join(dir, name);
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE t (n)');
    const version = writer.prepare('PRAGMA data_version').pluck();
    let asked = 0;
    const shm = shmHeaderReader(path);
    const mark = createChangeMark({
      dataVersion: () => (asked++, version.get() as number),
      readHeader: header ? shm.readHeader : () => false,
      close: shm.close,
    });
    const other = new Database(path);
    return {
      writer,
      other,
      mark,
      asked: () => asked,
      close() {
        mark.close();
        other.close();
        writer.close();
      },
    };
  }

  it('while nobody commits, data_version is asked once', async () => {
    const t = await opened('header-quiet.db');
    try {
      const first = t.mark.read();
      for (let i = 0; i < 5; i++) {
        await nextTurn();
        t.other.prepare('SELECT count(*) FROM t').get(); // reads change nothing
        expect(t.mark.read()).toBe(first);
      }
      expect(t.asked()).toBe(1);
    } finally {
      t.close();
    }
  });

  it("another connection's commit is asked about and moves the mark; the writer's own is asked about and does not", async () => {
    const t = await opened('header-commits.db');
    try {
      const first = t.mark.read();
      t.other.exec('INSERT INTO t VALUES (1)');
      await nextTurn();
      const moved = t.mark.read();
      expect(moved).not.toBe(first);
      expect(t.asked()).toBe(2);
      t.writer.exec('INSERT INTO t VALUES (2)');
      await nextTurn();
      expect(t.mark.read()).toBe(moved);
      expect(t.asked()).toBe(3);
      await nextTurn();
      expect(t.mark.read()).toBe(moved);
      expect(t.asked()).toBe(3);
    } finally {
      t.close();
    }
  });

  it('without a header to read, data_version is asked every turn', async () => {
    const t = await opened('header-none.db', false);
    try {
      t.mark.read();
      await nextTurn();
      const before = t.mark.read();
      t.other.exec('INSERT INTO t VALUES (1)');
      expect(t.mark.read(), "this turn's answer stands").toBe(before);
      await nextTurn();
      expect(t.mark.read()).not.toBe(before);
      expect(t.asked()).toBe(3);
    } finally {
      t.close();
    }
  });
});
