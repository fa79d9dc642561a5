/**
 * A successful write's audit entry commits in the write's own transaction
 * (issue #16: one commit per journaled write instead of two after the
 * prepared entry), and is announced once that transaction committed.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createKernel, type Kernel } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { connection } from '../../src/kernel/connection.js';
import type { Store } from '../../src/kernel/store.js';
import { openStore } from '../../src/store/open.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';

let dir: string;
let close: () => Promise<void>;
afterEach(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

async function counted(): Promise<{ kernel: Kernel; events: EventBus; writes: () => number }> {
  dir = mkdtempSync(join(tmpdir(), 'airlock-write-audit-'));
  const opened = await openStore({ data: dir });
  let writes = 0;
  const store: Store = {
    ...opened.store,
    kind: opened.store.kind,
    location: opened.store.location,
    transaction: (fn, options) => {
      writes++;
      return opened.store.transaction(fn, options);
    },
    read: (fn) => opened.store.read(fn),
    close: () => opened.store.close(),
  };
  const events = await createEventBus();
  const kernel = createKernel({ store, blobs: opened.blobs, events, logger: silentLogger });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  close = async () => {
    await kernel.close();
    await events.close();
    await store.close();
  };
  return { kernel, events, writes: () => writes };
}

it('a journaled atomic write commits its journal and audit entries with the write: one write transaction in all', async () => {
  const { kernel, events, writes } = await counted();
  const conn = connection('audit:1', 'internal');
  await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
  const pending = (await kernel.consent.pending()).find((p) => p.connection === conn.id)!;
  await kernel.consent.approve(pending.id, null);
  const announced: unknown[] = [];
  events.subscribe((e) => {
    if (e.data.event === 'auditRecorded') announced.push(e.data);
  });

  const before = writes();
  const outcome = await kernel.call(
    'ledger',
    'ledger_append',
    { operationID: randomUUID(), account: 'a', amount: 1, expectedVersion: null },
    { connection: conn },
  );
  expect(outcome).toMatchObject({ ok: true });
  // The write with its journal entry (receipt) and audit entry; no prepared entry first.
  expect(writes() - before).toBe(1);
  const entries = await kernel.audit.list({ door: 'ledger' });
  const appended = entries.filter((e) => e.tool === 'ledger_append');
  expect(appended).toHaveLength(1);
  expect(appended[0]).toMatchObject({ result: 'ok', connection: 'audit:1' });
  expect(announced).toHaveLength(1);
});

it('a write that fails is audited with its failure and no ok entry', async () => {
  const { kernel } = await counted();
  const conn = connection('audit:2', 'internal');
  await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
  const pending = (await kernel.consent.pending()).find((p) => p.connection === conn.id)!;
  await kernel.consent.approve(pending.id, null);
  const outcome = await kernel.call(
    'ledger',
    'ledger_append',
    { operationID: randomUUID(), account: 'b', amount: 1, expectedVersion: 7 },
    { connection: conn },
  );
  expect(outcome).toMatchObject({ ok: false, code: 'versionConflict' });
  const appended = (await kernel.audit.list({ door: 'ledger' })).filter(
    (e) => e.tool === 'ledger_append',
  );
  expect(appended.map((e) => e.result)).toEqual(['versionConflict']);
});
