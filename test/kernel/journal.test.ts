import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { holdsFor } from '../helpers/wait.js';
import { conn, testKernel, textOf, type TestKernel } from '../helpers/kernel.js';
import { journalKey } from '../../src/kernel/writes/journal.js';
import { callDigest } from '../../src/kernel/digest.js';
import { connection } from '../../src/kernel/connection.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

async function grantedLedger(dir?: string, door = createLedgerDoor()): Promise<TestKernel> {
  const t = await testKernel([door], dir ? { dir } : {});
  await t.kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn() });
  const [pending] = await t.kernel.consent.pending();
  if (pending) await t.kernel.consent.approve(pending.id, null);
  return t;
}

const append = (t: TestKernel, args: Record<string, unknown>) =>
  t.kernel.call('ledger', 'ledger_append', args, { connection: conn() }).then(textOf) as Promise<
    Record<string, unknown>
  >;
const read = (t: TestKernel, account: string) =>
  t.kernel
    .call('ledger', 'ledger_read', { account }, { connection: conn() })
    .then(textOf) as Promise<Record<string, unknown>>;

/** An `uncertain` journal entry for a ledger_append of `op` (as a timed-out run leaves it). */
const uncertainEntry = (op: { operationID: string; account: string }) => ({
  scope: 'ledger',
  operationId: journalKey(conn(), op.operationID),
  digest: callDigest('ledger_append', op),
  state: 'uncertain' as const,
  tool: 'ledger_append',
  connection: conn().id,
  target: op.account,
  receipt: null,
  provenance: null,
  createdAt: Date.now(),
  updatedAt: Date.now(),
  expiresAt: Date.now() + 60_000,
});

/** `op` run at once by `t` and by a second kernel on the same store: both answers. */
async function onTwoInstances(t: TestKernel, op: Record<string, unknown>) {
  const other = await testKernel([createLedgerDoor()], { dir: t.dir });
  try {
    return await Promise.all([
      append(t, { ...op, delayMs: 100 }),
      other.kernel
        .call('ledger', 'ledger_append', { ...op, delayMs: 100 }, { connection: conn() })
        .then(textOf),
    ]);
  } finally {
    await other.close();
  }
}

describe('journal', () => {
  it('retry with the same operationID and arguments returns the identical receipt and writes nothing', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'a', amount: 5, expectedVersion: 0 };
    const first = await append(tk, op);
    const second = await append(tk, op);
    expect(first).toEqual({ operationID: op.operationID, account: 'a', committedVersion: 1 });
    expect(second).toEqual(first);
    expect(await read(tk, 'a')).toMatchObject({
      version: 1,
      entries: [{ operationID: op.operationID, amount: 5 }],
    });
  });

  it('the same operationID with different arguments is malformedRequest and writes nothing', async () => {
    tk = await grantedLedger();
    const id = randomUUID();
    await append(tk, { operationID: id, account: 'a', amount: 5, expectedVersion: 0 });
    const reused = await append(tk, {
      operationID: id,
      account: 'a',
      amount: 6,
      expectedVersion: 1,
    });
    expect(reused.code).toBe('malformedRequest');
    expect(String(reused.message)).toContain('operationID');
    expect(String(reused.message)).toContain('already used for a different request');
    expect(await read(tk, 'a')).toMatchObject({ version: 1 });
  });

  it('an expectedVersion mismatch answers versionConflict with the current version and writes nothing', async () => {
    tk = await grantedLedger();
    await append(tk, { operationID: randomUUID(), account: 'a', amount: 1, expectedVersion: 0 });
    const conflict = await append(tk, {
      operationID: randomUUID(),
      account: 'a',
      amount: 1,
      expectedVersion: 0,
    });
    expect(conflict).toMatchObject({ code: 'versionConflict', currentVersion: 1 });
    expect(await read(tk, 'a')).toMatchObject({ version: 1 });
  });

  it('another agent replaying an operationID and its arguments runs its own operation and learns no receipt', async () => {
    const t = await testKernel([createLedgerDoor()]);
    tk = t;
    const agent = (name: string) => connection(`agent:${name}`, 'http-principal', undefined, name);
    for (const who of ['alice', 'mallory']) {
      await tk.kernel.call('ledger', 'ledger_request_write_access', {}, { connection: agent(who) });
      const [pending] = await tk.kernel.consent.pending();
      await tk.kernel.consent.approve(pending!.id, null);
    }
    const op = { operationID: randomUUID(), account: 'x', amount: 5, expectedVersion: null };
    const call = (who: string) =>
      t.kernel
        .call('ledger', 'ledger_append', op, { connection: agent(who) })
        .then(textOf) as Promise<Record<string, unknown>>;
    const first = await call('alice');
    expect(first).toMatchObject({ committedVersion: 1 });
    expect(await call('alice')).toEqual(first);
    expect(await call('mallory')).toMatchObject({ committedVersion: 2 });
    expect(
      await tk.kernel.journal.state('ledger', journalKey(agent('mallory'), op.operationID)),
    ).toMatchObject({
      state: 'committed',
    });
  });

  it('a failed write leaves the operation not-found, so a corrected retry with the same id is not refused', async () => {
    tk = await grantedLedger();
    await append(tk, { operationID: randomUUID(), account: 'a', amount: 1, expectedVersion: 0 });
    const id = randomUUID();
    await append(tk, { operationID: id, account: 'a', amount: 1, expectedVersion: 7 });
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), id))).toEqual({
      state: 'not-found',
    });
  });

  it('reports committed with the receipt, and not-found for an unknown operation', async () => {
    tk = await grantedLedger();
    const id = randomUUID();
    const receipt = await append(tk, {
      operationID: id,
      account: 'a',
      amount: 1,
      expectedVersion: null,
    });
    const q = (await tk.kernel
      .call('ledger', 'ledger_query_operation', { operationID: id }, { connection: conn() })
      .then(textOf)) as Record<string, unknown>;
    expect(q).toEqual({ state: 'committed', receipt });
    expect(await tk.kernel.journal.state('ledger', randomUUID())).toEqual({ state: 'not-found' });
  });

  it('keeps receipts across a restart', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'a', amount: 2, expectedVersion: 0 };
    const receipt = await append(tk, op);
    await tk.close();
    const dir = tk.dir;
    tk = await grantedLedger(dir);
    expect(await append(tk, op)).toEqual(receipt);
    expect(await read(tk, 'a')).toMatchObject({ version: 1 });
  });

  it('a journaled call that times out before its write started answers timeout and leaves no entry', async () => {
    tk = await testKernel([{ ...createLedgerDoor(), limits: { timeoutMs: 30 } }]);
    await tk.kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn() });
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    const id = randomUUID();
    // delayMs runs before the write starts, so the timeout wins before anything is written.
    const timedOut = await append(tk, {
      operationID: id,
      account: 'b',
      amount: 1,
      expectedVersion: null,
      delayMs: 200,
    });
    expect(timedOut.code).toBe('timeout');
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), id))).toEqual({
      state: 'not-found',
    });
    // Nothing happens when the handler wakes up after the deadline: its late write is refused.
    await holdsFor(async () => (await read(tk!, 'b')).code === 'notFound', 250, {
      message: 'no late write',
    });
  });

  it('expires receipts after the retention period', async () => {
    let now = 1_000_000;
    tk = await testKernel([createLedgerDoor()], { now: () => now, receiptRetentionMs: 1000 });
    await tk.kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn() });
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    const id = randomUUID();
    await append(tk, { operationID: id, account: 'a', amount: 1, expectedVersion: null });
    now += 999;
    expect(await tk.kernel.journal.purgeExpired()).toBe(0);
    now += 2;
    expect(await tk.kernel.journal.purgeExpired()).toBe(1);
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), id))).toEqual({
      state: 'not-found',
    });
  });
});

describe('atomic operations: the journal entry commits with the write', () => {
  it('writes no entry before the write: a running operation is not-found to others, and a retry on the same instance is busy', async () => {
    let delaying!: () => void;
    const inFlight = new Promise<void>((r) => (delaying = r));
    tk = await grantedLedger(undefined, createLedgerDoor({ onDelay: () => delaying() }));
    const op = { operationID: randomUUID(), account: 'slow', amount: 1, expectedVersion: null };
    const first = append(tk, { ...op, delayMs: 300 });
    await inFlight; // the first run is in its handler
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), op.operationID))).toEqual({
      state: 'not-found',
    });
    const retried = await append(tk, { ...op, delayMs: 300 });
    expect(retried.code).toBe('busy');
    expect(await first).toMatchObject({ committedVersion: 1 });
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), op.operationID))).toEqual({
      state: 'committed',
      receipt: { operationID: op.operationID, account: 'slow', committedVersion: 1 },
    });
  });

  it('two instances on one store running one operation at once apply it once and both answer its receipt', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'race', amount: 3, expectedVersion: null };
    const [a, b] = await onTwoInstances(tk, op);
    expect(a).toEqual({ operationID: op.operationID, account: 'race', committedVersion: 1 });
    expect(b).toEqual(a);
    expect(await read(tk, 'race')).toMatchObject({ version: 1, entries: [{ amount: 3 }] });
  });

  it('a replayed atomic operation is no longer in flight: a retry with other arguments is malformedRequest', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'once', amount: 1, expectedVersion: null };
    const receipt = await append(tk, op);
    expect(await append(tk, op)).toEqual(receipt);
    const reused = await append(tk, { ...op, amount: 2, expectedVersion: 1 });
    expect(reused.code).toBe('malformedRequest');
    expect(await read(tk, 'once')).toMatchObject({ version: 1, entries: [{ amount: 1 }] });
  });

  it('an operation left uncertain answers mutationUncertain on retry and is not run again', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'u', amount: 1, expectedVersion: null };
    await tk.kernel.store.transaction((tx) => tx.journal.insert(uncertainEntry(op)));
    const retried = await append(tk, op);
    expect(retried.code).toBe('mutationUncertain');
    // It names the operation and its tool, and what to check before anything else.
    expect(String(retried.message)).toMatch(
      new RegExp(
        `^Operation ${op.operationID} of ledger_append may or may not have been applied.*Check whether its change is there`,
      ),
    );
    // Nothing was written: the account was never created.
    expect(await read(tk, 'u')).toMatchObject({ code: 'notFound' });
  });
});

describe('a settled operation answers the same when its retry fails on its own', () => {
  it('an uncertain operation whose retry the door refuses (version conflict) answers mutationUncertain, not the conflict', async () => {
    tk = await grantedLedger();
    // Version 5 does not exist: the retry's own write would fail with versionConflict.
    const op = { operationID: randomUUID(), account: 'uv', amount: 1, expectedVersion: 5 };
    await tk.kernel.store.transaction((tx) => tx.journal.insert(uncertainEntry(op)));
    const retried = await append(tk, op);
    expect(retried.code).toBe('mutationUncertain');
    expect(await read(tk, 'uv')).toMatchObject({ code: 'notFound' });
  });

  it('a reused operationID answers malformedRequest even when the new arguments would conflict', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'ru', amount: 1, expectedVersion: null };
    await tk.kernel.store.transaction((tx) => tx.journal.insert(uncertainEntry(op)));
    const reused = await append(tk, { ...op, amount: 2, expectedVersion: 7 });
    expect(reused.code).toBe('malformedRequest');
  });

  it('two instances running one versioned operation at once: the one whose write finds the version moved answers the receipt', async () => {
    tk = await grantedLedger();
    // expectedVersion 0: whichever run writes second finds version 1 — its own operation's.
    const op = { operationID: randomUUID(), account: 'vr', amount: 2, expectedVersion: 0 };
    const [a, b] = await onTwoInstances(tk, op);
    expect(a).toEqual({ operationID: op.operationID, account: 'vr', committedVersion: 1 });
    expect(b).toEqual(a);
    expect(await read(tk, 'vr')).toMatchObject({ version: 1, entries: [{ amount: 2 }] });
  });

  it('a write that fails for a fresh operation still answers its own failure and leaves no entry', async () => {
    tk = await grantedLedger();
    const op = { operationID: randomUUID(), account: 'fresh', amount: 1, expectedVersion: 3 };
    const failed = await append(tk, op);
    expect(failed.code).toBe('versionConflict');
    expect(await tk.kernel.journal.state('ledger', journalKey(conn(), op.operationID))).toEqual({
      state: 'not-found',
    });
  });
});

describe('journal states after a crash', () => {
  it('a prepared entry with no write is reported prepared-not-submitted and runs on retry', async () => {
    tk = await grantedLedger();
    const id = randomUUID();
    const op = { operationID: id, account: 'c', amount: 3, expectedVersion: null };
    // Simulate a crash between prepare and commit: the prepared entry exists, the write does not.
    const key = journalKey(conn(), id);
    const begun = await tk.kernel.journal.begin({
      scope: 'ledger',
      operationId: key,
      digest: (await import('../../src/kernel/digest.js')).digestOf({
        tool: 'ledger_append',
        input: op,
      }),
      tool: 'ledger_append',
      connection: 'test:1',
      target: 'c',
      provenance: null,
    });
    expect('kind' in begun && begun.kind).toBe('open');
    await tk.close();
    const dir = tk.dir;
    tk = await grantedLedger(dir);
    expect(await tk.kernel.journal.state('ledger', key)).toEqual({
      state: 'prepared-not-submitted',
    });
    expect(await append(tk, op)).toMatchObject({ committedVersion: 1 });
    expect(await tk.kernel.journal.state('ledger', key)).toMatchObject({ state: 'committed' });
  });
});

describe('settling open entries', () => {
  const entry = (scope: string, operationId: string) => ({
    scope,
    operationId,
    digest: 'd',
    state: 'uncertain' as const,
    tool: `${scope}_write`,
    connection: 'test:1',
    target: null,
    receipt: null,
    provenance: null,
    createdAt: Date.now(),
    updatedAt: Date.now(),
    expiresAt: Date.now() + 60_000,
  });

  it('resolvePending with a scope asks about and settles only that scope’s entries', async () => {
    tk = await testKernel([]);
    await tk.kernel.store.transaction(async (tx) => {
      await tx.journal.insert(entry('fs', 'agent:a#1'));
      await tx.journal.insert(entry('mem', 'agent:a#2'));
    });
    const asked: string[] = [];
    const changed = await tk.kernel.journal.resolvePending(
      async (e) => {
        asked.push(e.scope);
        return { exists: true, receipt: { ok: e.operationId } };
      },
      { scope: 'fs' },
    );
    expect(changed).toBe(1);
    expect(asked).toEqual(['fs']);
    expect(await tk.kernel.journal.state('fs', 'agent:a#1')).toEqual({
      state: 'committed',
      receipt: { ok: 'agent:a#1' },
    });
    expect(await tk.kernel.journal.state('mem', 'agent:a#2')).toEqual({
      state: 'submission-uncertain-do-not-use-new-id',
    });
  });
});

describe('shutdown', () => {
  it('lets an in-flight journaled write finish before closing, and refuses new calls meanwhile', async () => {
    let delaying!: () => void;
    const inFlight = new Promise<void>((r) => (delaying = r));
    tk = await grantedLedger(undefined, createLedgerDoor({ onDelay: () => delaying() }));
    const op = {
      operationID: randomUUID(),
      account: 's',
      amount: 1,
      expectedVersion: null,
      delayMs: 200,
    };
    const pending = append(tk, op);
    await inFlight; // the write is in its handler when the close begins
    const closing = tk.close();
    const refused = await append(tk, { ...op, operationID: randomUUID(), delayMs: 0 });
    expect(refused.code).toBe('unavailable');
    expect(await pending).toMatchObject({ committedVersion: 1 });
    await closing;
    const dir = tk.dir;
    tk = await grantedLedger(dir);
    expect(await read(tk, 's')).toMatchObject({ version: 1 });
  });
});
