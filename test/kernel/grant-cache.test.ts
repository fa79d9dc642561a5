/**
 * The kernel keeps a connection's active grants between its calls (issue 31:
 * the grant read was a tenth of a journaled write's CPU on SQLite) — and a
 * grant that was revoked, ended or expired is never honoured: every way a
 * grant changes moves the store's grants mark (store.ts `grantsMark`), and
 * the next call reads again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createConsent, type Consent } from '../../src/kernel/authority/consent.js';
import { createPrincipals } from '../../src/kernel/authority/principals.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { isFailure } from '../../src/kernel/errors.js';
import type { Store } from '../../src/kernel/store.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite/index.js';

const dir = await mkdtemp(join(tmpdir(), 'airlock-grant-cache-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

let files = 0;
async function sqlite(path = join(dir, `g${++files}.db`)): Promise<SqliteStore> {
  const store = await createSqliteStore({ path });
  closers.push(() => store.close());
  return store;
}

async function bus(): Promise<EventBus> {
  const events = await createEventBus();
  closers.push(() => events.close());
  return events;
}

/** The store with its reads counted (every grant lookup that was not kept is one). */
function counted(store: Store, options: { mark?: boolean } = {}) {
  const counter = { reads: 0 };
  const wrapped: Store = {
    kind: store.kind,
    location: store.location,
    transaction: (fn, o) => store.transaction(fn, o),
    read: (fn, o) => {
      counter.reads += 1;
      return store.read(fn, o);
    },
    ...(options.mark === false ? {} : { grantsMark: () => store.grantsMark?.() ?? null }),
    close: () => store.close(),
  };
  return { store: wrapped, counter };
}

/** A consent whose clock the test moves. */
async function consentOn(store: Store, clock = { now: 1_000_000 }) {
  return createConsent({ store, events: await bus(), now: () => clock.now });
}

/** Files a consent request for `connection` and approves it: its grant. */
async function granted(consent: Consent, connection: string) {
  const asked = await consent.request(connection, 'ledger', {
    capability: 'write',
    summary: 'ledger: write access',
  });
  if (!isFailure(asked)) return asked;
  const approved = await consent.approve(String(asked.data?.approvalID), null);
  if (isFailure(approved)) throw new Error(approved.message);
  const grant = await consent.find(connection, 'ledger', 'write');
  if (!grant) throw new Error('no grant after the approval');
  return grant;
}

describe('the grant cache', () => {
  it('a grant is read once and then kept while nothing changes', async () => {
    const { store, counter } = counted(await sqlite());
    const consent = await consentOn(store);
    await granted(consent, 'c1');
    const before = counter.reads;
    for (let i = 0; i < 5; i++) expect(await consent.find('c1', 'ledger', 'write')).not.toBeNull();
    expect(counter.reads - before).toBeLessThanOrEqual(1);
  });

  it('a revoked grant is refused by the next lookup', async () => {
    const { store } = counted(await sqlite());
    const consent = await consentOn(store);
    const grant = await granted(consent, 'c1');
    expect(await consent.find('c1', 'ledger', 'write')).not.toBeNull();
    expect(await consent.revoke(grant.id)).toBe(true);
    expect(await consent.find('c1', 'ledger', 'write')).toBeNull();
  });

  it('a grant approved after a lookup found none is found by the next lookup', async () => {
    const { store } = counted(await sqlite());
    const consent = await consentOn(store);
    expect(await consent.find('c2', 'ledger', 'write')).toBeNull();
    expect(await consent.find('c2', 'ledger', 'write')).toBeNull();
    await granted(consent, 'c2');
    expect(await consent.find('c2', 'ledger', 'write')).not.toBeNull();
  });

  it('an ended connection’s kept grant is refused', async () => {
    const { store } = counted(await sqlite());
    const consent = await consentOn(store);
    await granted(consent, 'c3');
    expect(await consent.find('c3', 'ledger', 'write')).not.toBeNull();
    await consent.endConnection('c3');
    expect(await consent.find('c3', 'ledger', 'write')).toBeNull();
  });

  it('a revoked agent’s kept grant is refused', async () => {
    const raw = await sqlite();
    const { store } = counted(raw);
    const consent = await consentOn(store, { now: Date.now() });
    const principals = createPrincipals({ store: raw, events: await bus() });
    const added = await principals.addAgent('robin');
    if (isFailure(added)) throw new Error(added.message);
    const who = await principals.authenticate(added.token);
    if (who?.kind !== 'agent') throw new Error('robin is not an agent');
    const connection = `agent:${who.key}`;
    await granted(consent, connection);
    expect(await consent.find(connection, 'ledger', 'write')).not.toBeNull();
    await principals.revokeAgent('robin');
    expect(await consent.find(connection, 'ledger', 'write')).toBeNull();
  });

  it('a grant revoked by any write transaction through tx.grants is refused', async () => {
    const { store } = counted(await sqlite());
    const consent = await consentOn(store);
    const grant = await granted(consent, 'c4');
    expect(await consent.find('c4', 'ledger', 'write')).not.toBeNull();
    await store.transaction((tx) => tx.grants.revoke(grant.id, 1_000_000));
    expect(await consent.find('c4', 'ledger', 'write')).toBeNull();
  });

  it('a grant revoked by another process on the same file is refused by the next lookup', async () => {
    const path = join(dir, 'two.db');
    const here = await sqlite(path);
    const there = await sqlite(path);
    const consent = await consentOn(here);
    const grant = await granted(consent, 'c5');
    expect(await consent.find('c5', 'ledger', 'write')).not.toBeNull();
    await there.transaction((tx) => tx.grants.revoke(grant.id, 1_000_000));
    // The change mark is read once per turn of the event loop.
    await new Promise((r) => setImmediate(r));
    expect(await consent.find('c5', 'ledger', 'write')).toBeNull();
  });

  it('a kept grant that has since expired is refused without a read', async () => {
    const { store, counter } = counted(await sqlite());
    const clock = { now: 1_000_000 };
    const consent = await consentOn(store, clock);
    const grant = await granted(consent, 'c6');
    expect(await consent.find('c6', 'ledger', 'write')).not.toBeNull();
    const before = counter.reads;
    clock.now = grant.expiresAt;
    expect(await consent.find('c6', 'ledger', 'write')).toBeNull();
    expect(counter.reads).toBe(before);
  });

  it('while a grant change is under way, every lookup reads', async () => {
    const { store, counter } = counted(await sqlite());
    const consent = await consentOn(store);
    const grant = await granted(consent, 'c7');
    expect(await consent.find('c7', 'ledger', 'write')).not.toBeNull();
    let finish!: () => void;
    const held = new Promise<void>((r) => (finish = r));
    const change = store.transaction(async (tx) => {
      await tx.grants.get(grant.id);
      await held;
      return tx.grants.revoke(grant.id, 1_000_000);
    });
    // Let the transaction start and touch tx.grants.
    await new Promise((r) => setImmediate(r));
    expect(store.grantsMark!()).toBeNull();
    const before = counter.reads;
    expect(await consent.find('c7', 'ledger', 'write')).not.toBeNull();
    expect(counter.reads).toBe(before + 1);
    finish();
    expect(await change).toBe(true);
    expect(await consent.find('c7', 'ledger', 'write')).toBeNull();
  });

  it('a store without a grants mark (PostgreSQL) is read on every lookup', async () => {
    const { store, counter } = counted(await sqlite(), { mark: false });
    const consent = await consentOn(store);
    await granted(consent, 'c8');
    const before = counter.reads;
    for (let i = 0; i < 3; i++) await consent.find('c8', 'ledger', 'write');
    expect(counter.reads - before).toBe(3);
  });
});

describe('the SQLite grants mark', () => {
  it('stays through other writes and reads, and moves when a transaction uses tx.grants', async () => {
    const store = await sqlite();
    const first = store.grantsMark!();
    expect(first).not.toBeNull();
    await store.transaction((tx) => tx.records.put('x', 'y', 1));
    await store.read((tx) => tx.grants.listActive(0));
    expect(store.grantsMark!()).toBe(first);
    await store.transaction((tx) => tx.grants.listActive(0));
    expect(store.grantsMark!()).not.toBe(first);
  });

  it('moves when a transaction that used tx.grants rolls back', async () => {
    const store = await sqlite();
    const first = store.grantsMark!();
    await expect(
      store.transaction(async (tx) => {
        await tx.grants.listActive(0);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    const after = store.grantsMark!();
    expect(after).not.toBeNull();
    expect(after).not.toBe(first);
  });

  it('is null once the store is closed', async () => {
    const store = await createSqliteStore({ path: join(dir, 'closed.db') });
    await store.close();
    expect(store.grantsMark!()).toBeNull();
  });
});
