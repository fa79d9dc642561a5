/**
 * "Approve 15 minutes" narrowed to the call's subject (issue 27 item 3): the
 * grant covers only calls of the same agent, rule and target on the same
 * file/note/page; another subject or another agent is asked again. The mcp
 * door names the subject only for an upstream tool whose declared input has a
 * string `path`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import type { AskedCall } from '../../src/kernel/authority/asks.js';
import { approvalScopes, grantCapabilityText } from '../../src/web/app/policy-text.js';

let tk: TestKernel;
beforeAll(async () => {
  tk = await testKernel([]);
});
afterAll(async () => {
  await tk.close();
});

const edit = (agent: string, path: string | null, digest: string): AskedCall => ({
  connection: `c-${agent}`,
  agent,
  door: 'fs',
  tool: 'fs.edit_file',
  digest,
  target: 'fs:edit_file',
  rule: 'r1',
  subject: path === null ? null : `file ${path}`,
  preview: async () => ({ summary: `edit ${path ?? '?'}` }),
});

async function ask(call: AskedCall): Promise<string> {
  const f = await tk.kernel.asks.check(call);
  expect(f).toMatchObject({ code: 'approvalRequired' });
  return String(f?.data?.approvalID);
}

describe('a 15-minute approval narrowed to one file', () => {
  it('covers the same file for the same agent, not another file', async () => {
    const id = await ask(edit('alice', '/a.txt', 'd1'));
    const card = (await tk.kernel.consent.pending()).find((a) => a.id === id)!;
    expect(card.preview).toMatchObject({ subject: 'file /a.txt' });
    expect(approvalScopes(card).narrow).toBe(
      'Only fs:edit_file on file /a.txt by alice for 15 minutes',
    );
    const approved = await tk.kernel.asks.approve(id, '15m-subject');
    expect(approved).toMatchObject({ status: 'approved', scope: '15m-subject' });

    // Another edit of the same file (other arguments) runs without asking.
    expect(await tk.kernel.asks.check(edit('alice', '/a.txt', 'd2'))).toBeNull();
    // Another file is asked.
    await ask(edit('alice', '/b.txt', 'd3'));
    // A call naming no file is asked.
    await ask(edit('alice', null, 'd4'));
  });

  it('does not cover a second agent on the same file', async () => {
    const id = await ask(edit('carol', '/c.txt', 'e1'));
    await tk.kernel.asks.approve(id, '15m-subject');
    await ask(edit('dave', '/c.txt', 'e1'));
  });

  it('a hostile subject cannot forge a wider grant: a path with | is encoded', async () => {
    const id = await ask(edit('erin', '/x|', 'f1'));
    await tk.kernel.asks.approve(id, '15m-subject');
    // The plain 15-minute capability (any file) is not what was granted.
    await ask(edit('erin', '/y', 'f2'));
    await ask(edit('erin', null, 'f3'));
    const grants = await tk.kernel.store.read((tx) =>
      tx.grants.listActive(Date.now(), 'agent:erin'),
    );
    expect(grants.map((g) => grantCapabilityText(g.capability))).toEqual([
      'policy ask approved for 15 minutes (rule r1, target fs:edit_file, only file /x|)',
    ]);
  });

  it('an ask with no subject cannot be narrowed: malformedRequest, still pending', async () => {
    const id = await ask(edit('frank', null, 'g1'));
    expect(
      approvalScopes((await tk.kernel.consent.pending()).find((a) => a.id === id)!).narrow,
    ).toBeNull();
    expect(await tk.kernel.asks.approve(id, '15m-subject')).toMatchObject({
      code: 'malformedRequest',
    });
    expect((await tk.kernel.consent.pending()).some((a) => a.id === id)).toBe(true);
  });
});
