/**
 * PostgreSQL serialization failures (40001) and deadlocks (40P01) are retried
 * inside the store with jittered backoff (issue #15 item 4, P7): provoked
 * for real on the machine's PostgreSQL, they never reach the caller — not
 * as a store error, not as `internal` from a tool, not as a pending approval
 * left behind.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { createKernel, type Kernel } from '../../src/kernel/kernel.js';
import { createEventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { connection } from '../../src/kernel/connection.js';
import { createPostgresStore, type PostgresStore } from '../../src/store/postgres/index.js';
import { createPostgresBlobStore } from '../../src/store/blobs-postgres.js';
import { backoffMs } from '../../src/store/postgres/run-transaction.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createNotesDoor } from '../../src/doors/notes/index.js';
import type { RestResponse, ServedDoor } from '../../src/transport/surface.js';
import { ledgerKernel } from './ledger-kernel.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const schemas: string[] = [];
const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => undefined);
  for (const s of schemas) await dropSchema(s).catch(() => undefined);
});

/** A promise every party awaits until `parties` have arrived (first attempts only). */
function barrier(parties: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return async () => {
    arrived += 1;
    if (arrived === parties) open();
    if (arrived <= parties) await opened;
  };
}

async function openStore(onRetry?: (error: unknown) => void): Promise<PostgresStore> {
  const schema = uniqueSchema('conflicts');
  schemas.push(schema);
  const store = await createPostgresStore({
    url: PG_URL,
    schema,
    maxConnections: 16,
    ...(onRetry ? { onRetry } : {}),
  });
  cleanup.push(() => store.close());
  return store;
}

const codeOf = (error: unknown) => String((error as { code?: unknown }).code);

await describeWithPostgres('PostgreSQL conflicts are retried in the store', () => {
  it('backs off with full jitter, growing up to a cap', () => {
    expect(backoffMs(1, () => 1)).toBe(4);
    expect(backoffMs(3, () => 1)).toBe(16);
    expect(backoffMs(30, () => 1)).toBe(200);
    expect(backoffMs(30, () => 0)).toBe(0);
  });

  it('retries serialization failures of concurrent serializable writers until each commits once', async () => {
    const retried: string[] = [];
    const store = await openStore((error) => retried.push(codeOf(error)));
    const writers = 8;
    const allHaveRead = barrier(writers);
    // Write skew: each writer counts the collection and adds the next number.
    // Run alone, the numbers are 0..7; run concurrently under SERIALIZABLE,
    // all but one fail with 40001 and must be re-run.
    const results = await Promise.all(
      Array.from({ length: writers }, () =>
        store.transaction(async (tx) => {
          const seen = await tx.records.list('skew');
          await allHaveRead();
          await tx.records.put('skew', randomUUID(), { n: seen.length });
          return seen.length;
        }),
      ),
    );
    expect(retried).toContain('40001');
    expect([...results].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const stored = await store.read((tx) => tx.records.list<{ n: number }>('skew'));
    expect(stored.map((r) => r.value.n).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('retries a deadlock between keyed writers locking rows in opposite orders', async () => {
    const retried: string[] = [];
    const store = await openStore((error) => retried.push(codeOf(error)));
    // Two instances: one instance's keyed writes share one group transaction, so they never wait on each other.
    const other = await createPostgresStore({
      url: PG_URL,
      schema: store.schema,
      onRetry: (error) => retried.push(codeOf(error)),
    });
    cleanup.push(() => other.close());
    await store.transaction(async (tx) => {
      await tx.records.put('rows', 'a', { n: 0 });
      await tx.records.put('rows', 'b', { n: 0 });
    });
    const bothHoldOne = barrier(2);
    const bump = (on: PostgresStore, first: string, second: string) =>
      on.transaction(
        async (tx) => {
          const one = await tx.records.get<{ n: number }>('rows', first);
          await bothHoldOne();
          const two = await tx.records.get<{ n: number }>('rows', second);
          await tx.records.put('rows', first, { n: one!.value.n + 1 });
          await tx.records.put('rows', second, { n: two!.value.n + 1 });
        },
        { isolation: 'keyed' },
      );
    await Promise.all([bump(store, 'a', 'b'), bump(other, 'b', 'a')]);
    expect(retried).toContain('40P01');
    const after = await store.read(async (tx) => [
      (await tx.records.get<{ n: number }>('rows', 'a'))!.value.n,
      (await tx.records.get<{ n: number }>('rows', 'b'))!.value.n,
    ]);
    // Both increments of both rows, none lost.
    expect(after).toEqual([2, 2]);
  });

  it('keeps keyed read-modify-write exact: concurrent creators of one absent key take turns', async () => {
    const store = await openStore();
    // Three instances (one instance's keyed writes share a group and never overlap).
    const stores = [store];
    for (let i = 0; i < 2; i++) {
      const more = await createPostgresStore({ url: PG_URL, schema: store.schema });
      cleanup.push(() => more.close());
      stores.push(more);
    }
    const created = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        stores[i % 3]!.transaction(
          async (tx) => {
            if (await tx.records.get('once', 'k')) return false;
            await tx.records.put('once', 'k', { by: i });
            return true;
          },
          { isolation: 'keyed' },
        ),
      ),
    );
    expect(created.filter(Boolean)).toHaveLength(1);
  });

  it('answers concurrent approvals, consent requests and appends without an error, leaving none pending', async () => {
    const retried: string[] = [];
    const store = await openStore((error) => retried.push(codeOf(error)));
    const events = await createEventBus();
    const notes = createNotesDoor();
    const kernel: Kernel<ServedDoor> = createKernel<ServedDoor>({
      store,
      blobs: createPostgresBlobStore(store.pool, store.schema),
      events,
      logger: silentLogger,
    });
    kernel.mount(createLedgerDoor());
    kernel.mount(notes);
    await kernel.start();
    cleanup.push(
      () => events.close(),
      () => kernel.close(),
    );
    const route = notes.http!.routes!.find(
      (r) => r.method === 'POST' && r.path === 'notes/projects',
    )!;
    const made = (await route.handler({
      params: {},
      query: new URLSearchParams(),
      body: { name: 'home' },
      headers: {},
    })) as RestResponse;
    const project = made.body as { projectID: string; name: string };

    // Twelve connections ask at once; the owner approves all twelve at once.
    const conns = Array.from({ length: 12 }, (_, i) => connection(`pg-conflict:${i}`, 'internal'));
    const asked = await Promise.all(
      conns.map((c) => kernel.call('notes', 'rooqi_request_write_access', {}, { connection: c })),
    );
    for (const a of asked) expect(a).toMatchObject({ ok: false, code: 'approvalRequired' });
    const pending = (await kernel.consent.pending()).filter((p) =>
      p.connection.startsWith('pg-conflict:'),
    );
    expect(pending).toHaveLength(12);
    const decisions = await Promise.all(
      pending.map((p) => kernel.consent.approve(p.id, { id: project.projectID, name: 'home' })),
    );
    for (const d of decisions) expect(d).not.toHaveProperty('ok');
    expect(
      (await kernel.consent.pending()).filter((p) => p.connection.startsWith('pg-conflict:')),
    ).toEqual([]);

    // One document; every connection appends at revision 0 at once: one
    // `ready`, the rest `versionConflict`, never `internal`.
    const documentID = randomUUID();
    const prov = { provider: 'test', model: 'm', promptVersion: '1' };
    const createdNote = await kernel.call(
      'notes',
      'rooqi_create_note',
      { operationID: randomUUID(), documentID, title: 't', ...prov },
      { connection: conns[0]! },
    );
    expect(createdNote).toMatchObject({ ok: true });
    const appends = await Promise.all(
      conns.map((c, i) =>
        kernel.call(
          'notes',
          'rooqi_append_text',
          { operationID: randomUUID(), documentID, text: `from ${i}`, expectedVersion: 0, ...prov },
          { connection: c },
        ),
      ),
    );
    const codes = appends.map((a) => ('code' in a ? a.code : 'ready'));
    expect(codes.filter((c) => c === 'ready')).toHaveLength(1);
    expect(codes.filter((c) => c !== 'ready' && c !== 'versionConflict')).toEqual([]);
  });

  it('one atomic journaled operation run by two instances at once is applied once, and both answer its receipt', async () => {
    // Two kernels on two pools over one schema: two instances of one deployment.
    const first = await openStore();
    const second = await createPostgresStore({ url: PG_URL, schema: first.schema });
    cleanup.push(() => second.close());
    const instances = [await ledgerKernel(first, cleanup), await ledgerKernel(second, cleanup)];
    const conn = connection('pg-race:1', 'internal');
    await instances[0]!.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
    const [pending] = (await instances[0]!.consent.pending()).filter(
      (p) => p.connection === conn.id,
    );
    await instances[0]!.consent.approve(pending!.id, null);

    for (let round = 0; round < 5; round++) {
      const op = {
        operationID: randomUUID(),
        account: `race-${round}`,
        amount: 2,
        expectedVersion: null,
      };
      // Both handlers wait, then write at once: neither finds the other's entry
      // before its write, so the one that commits second finds it on insert.
      const outcomes = await Promise.all(
        instances.map((k) =>
          k.call('ledger', 'ledger_append', { ...op, delayMs: 50 }, { connection: conn }),
        ),
      );
      for (const o of outcomes) expect(o).toMatchObject({ ok: true });
      const receipts = outcomes.map((o) => (o as { value: unknown }).value);
      expect(receipts[1]).toEqual(receipts[0]);
      const account = await first.read((tx) =>
        tx.records.get<{ version: number; entries: unknown[] }>('ledger', op.account),
      );
      expect(account?.value).toMatchObject({ version: 1, entries: [{ amount: 2 }] });
    }
  });

  it("groups one instance's concurrent keyed writes into shared commits, a failing one alone rolled back", async () => {
    const store = await openStore();
    const before = { ...store.commits };
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) =>
        store.transaction(
          async (tx) => {
            await tx.records.put('grouped', `k${i}`, { i });
            if (i === 5) throw new Error('this one fails');
            return i;
          },
          { isolation: 'keyed' },
        ),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    const stored = await store.read((tx) => tx.records.list<{ i: number }>('grouped'));
    expect(stored.map((r) => r.value.i).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 24 }, (_, i) => i).filter((i) => i !== 5),
    );
    // 24 writes at once share fewer commits than writes; the failed one is in none
    // (it rolled its group back, and the others ran again without it).
    expect(store.commits.writes - before.writes).toBe(23);
    expect(store.commits.groups - before.groups).toBeLessThan(24);
  });

  it('a write held open does not hold the audit order: another instance appends and commits meanwhile, and ids follow commit order', async () => {
    const first = await openStore();
    const second = await createPostgresStore({ url: PG_URL, schema: first.schema });
    cleanup.push(() => second.close());
    const entry = (door: string) => ({
      at: Date.now(),
      connection: 'c',
      door,
      tool: 't',
      argsDigest: 'd',
      provenance: null,
      result: 'ok',
      durationMs: 1,
      decision: null,
      rule: null,
    });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let appended!: () => void;
    const placedFirst = new Promise<void>((resolve) => (appended = resolve));
    const holding = first.transaction(
      async (tx) => {
        const placed = await tx.audit.append(entry('a'));
        await tx.records.put('held', 'k', 1);
        appended();
        await held;
        return placed;
      },
      { isolation: 'keyed' },
    );
    await placedFirst;
    // The first write is open with its entry appended; the second commits without waiting for it.
    const secondEntry = await second.transaction((tx) => tx.audit.append(entry('b')), {
      isolation: 'keyed',
    });
    expect(secondEntry.id).toBeGreaterThan(0);
    release();
    const firstEntry = await holding;
    // Ids are drawn in commit order: a reader that saw b never misses a later a.
    expect(firstEntry.id).toBeGreaterThan(secondEntry.id);
    const listed = await first.read((tx) => tx.audit.list());
    expect(listed.map((e) => e.door)).toEqual(['b', 'a']);
    expect(listed[1]!.prevHash).toBe(listed[0]!.hash);
  });

  it('two hundred agents asking for access at once each get approvalRequired, never internal', async () => {
    const retried: string[] = [];
    const store = await openStore((error) => retried.push(codeOf(error)));
    const kernel = await ledgerKernel(store, cleanup);
    const asked = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        kernel.call(
          'ledger',
          'ledger_request_write_access',
          {},
          { connection: connection(`agent:crowd-${i}/session:s${i}`, 'http-session') },
        ),
      ),
    );
    const codes = asked.map((a) => ('code' in a ? a.code : 'ok'));
    expect(codes.filter((c) => c !== 'approvalRequired')).toEqual([]);
    expect(await kernel.consent.pending()).toHaveLength(200);
    // Different agents' requests do not conflict: nothing to retry.
    expect(retried).toEqual([]);
  });
});
