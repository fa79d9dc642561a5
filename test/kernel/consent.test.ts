import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { isFailure } from '../../src/kernel/errors.js';
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
