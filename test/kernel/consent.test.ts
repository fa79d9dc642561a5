import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { isFailure } from '../../src/kernel/errors.js';
import { connection } from '../../src/kernel/connection.js';
import { conn, testKernel, textOf, type TestKernel } from '../helpers/kernel.js';

let tk: TestKernel | undefined;
afterEach(async () => {
  await tk?.dispose();
  tk = undefined;
});

const ask = (t: TestKernel, c = conn()) =>
  t.kernel
    .call('ledger', 'ledger_request_write_access', {}, { connection: c })
    .then(textOf) as Promise<Record<string, unknown>>;
const write = (t: TestKernel, c = conn()) =>
  t.kernel
    .call(
      'ledger',
      'ledger_append',
      { operationID: randomUUID(), account: 'a', amount: 1, expectedVersion: null },
      { connection: c },
    )
    .then(textOf) as Promise<Record<string, unknown>>;

describe('consent', () => {
  it('answers approvalRequired with a pending approval until the owner approves, then the grant', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const first = await ask(tk);
    expect(first.code).toBe('approvalRequired');
    const pending = await tk.kernel.consent.pending();
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({
      door: 'ledger',
      capability: 'write',
      connection: 'test:1',
      status: 'pending',
    });
    // Asking again while pending files no second request.
    expect((await ask(tk)).code).toBe('approvalRequired');
    expect(await tk.kernel.consent.pending()).toHaveLength(1);
    await tk.kernel.consent.approve(pending[0]!.id, { id: 'p1', name: 'Project 1' });
    const granted = await ask(tk);
    expect(granted.grantID).toEqual(expect.any(String));
  });

  it('a tool needing a grant answers notAuthorized without one, and runs with one', async () => {
    tk = await testKernel([createLedgerDoor()]);
    expect((await write(tk)).code).toBe('notAuthorized');
    await ask(tk);
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    expect(await write(tk)).toMatchObject({ committedVersion: 1 });
  });

  it('a grant belongs to its connection only', async () => {
    tk = await testKernel([createLedgerDoor()]);
    await ask(tk);
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    expect((await write(tk, conn('test:other'))).code).toBe('notAuthorized');
  });

  it('answers approvalDenied after the owner denies', async () => {
    tk = await testKernel([createLedgerDoor()]);
    await ask(tk);
    const denied = await tk.kernel.consent.deny((await tk.kernel.consent.pending())[0]!.id);
    expect(denied).toMatchObject({ status: 'denied' });
    expect((await ask(tk)).code).toBe('approvalDenied');
    expect((await write(tk)).code).toBe('notAuthorized');
  });

  it('decides an approval once', async () => {
    tk = await testKernel([createLedgerDoor()]);
    await ask(tk);
    const id = (await tk.kernel.consent.pending())[0]!.id;
    await tk.kernel.consent.approve(id, null);
    const again = await tk.kernel.consent.deny(id);
    expect(isFailure(again) && again.code).toBe('malformedRequest');
    expect(isFailure(await tk.kernel.consent.approve(randomUUID(), null))).toBe(true);
  });

  it('grants last 15 minutes by default and then behave as never granted', async () => {
    let now = 10_000_000;
    tk = await testKernel([createLedgerDoor()], { now: () => now });
    await ask(tk);
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    const [grant] = await tk.kernel.consent.grants();
    expect(grant!.expiresAt - grant!.createdAt).toBe(15 * 60 * 1000);
    now += 15 * 60 * 1000 - 1;
    expect(await write(tk)).toMatchObject({ committedVersion: 1 });
    now += 1;
    expect((await write(tk)).code).toBe('notAuthorized');
    expect((await ask(tk)).code).toBe('approvalRequired');
  });

  it('never widens: a grant for one capability does not satisfy another', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const read = await tk.kernel.consent.request('test:1', 'ledger', { capability: 'read' });
    expect(isFailure(read) && read.code).toBe('approvalRequired');
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    expect(await tk.kernel.consent.find('test:1', 'ledger', 'read')).not.toBeNull();
    expect(await tk.kernel.consent.find('test:1', 'ledger', 'write')).toBeNull();
    expect((await write(tk)).code).toBe('notAuthorized');
  });

  it('a revoked grant stops working at once', async () => {
    tk = await testKernel([createLedgerDoor()]);
    await ask(tk);
    const approval = await tk.kernel.consent.approve(
      (await tk.kernel.consent.pending())[0]!.id,
      null,
    );
    if (isFailure(approval)) throw new Error('approve failed');
    expect(await tk.kernel.consent.revoke(approval.grantId!)).toBe(true);
    expect((await write(tk)).code).toBe('notAuthorized');
  });
});

describe('approval caps and lifetimes (authority.md §2)', () => {
  const agentConn = (agent: string, session: string) =>
    connection(`agent:${agent}/session:${session}`, 'http-session', undefined, agent);

  it('an agent may have 20 pending approvals; the 21st answers busy naming them, and another agent is unaffected', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const t = tk;
    const asked = [];
    for (let i = 0; i < 20; i++) asked.push(await ask(t, agentConn('flood', `s${i}`)));
    expect(asked.every((a) => a.code === 'approvalRequired')).toBe(true);
    const over = await ask(t, agentConn('flood', 's20'));
    expect(over.code).toBe('busy');
    expect(over.pending).toEqual(asked.map((a) => a.approvalID));
    expect((await ask(t, agentConn('calm', 's0'))).code).toBe('approvalRequired');
    expect(await t.kernel.consent.pending()).toHaveLength(21);
  });

  it('a pending approval expires after 15 minutes undecided and leaves the inbox', async () => {
    let now = 1_000_000;
    tk = await testKernel([createLedgerDoor()], { now: () => now });
    const first = await ask(tk);
    now += 15 * 60 * 1000 - 1;
    expect((await tk.kernel.consent.pending()).map((a) => a.id)).toEqual([first.approvalID]);
    now += 1;
    expect(await tk.kernel.consent.pending()).toEqual([]);
    const late = await tk.kernel.consent.approve(String(first.approvalID), null);
    expect(late).toMatchObject({ ok: false, code: 'malformedRequest' });
    expect(isFailure(late) && late.message).toContain('expired');
    const again = await ask(tk);
    expect(again.code).toBe('approvalRequired');
    expect(again.approvalID).not.toBe(first.approvalID);
  });

  it('when a session ends, its pending approvals are cancelled and its grants end', async () => {
    tk = await testKernel([createLedgerDoor()]);
    const a = agentConn('alice', 'one');
    const b = agentConn('alice', 'two');
    await ask(tk, a);
    await tk.kernel.consent.approve((await tk.kernel.consent.pending())[0]!.id, null);
    await ask(tk, b);
    expect(await tk.kernel.consent.grants()).toHaveLength(1);
    await tk.kernel.consent.endConnection(a.id);
    await tk.kernel.consent.endConnection(b.id);
    expect(await tk.kernel.consent.grants()).toEqual([]);
    expect(await tk.kernel.consent.pending()).toEqual([]);
  });
});
