/**
 * The owner's policy over real HTTP (authority.md §3): an MCP client acting
 * as an agent calls the openapi door against a loopback API that counts
 * requests; the owner decides through the owner REST routes.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { compileSpec } from '../../src/doors/openapi/compile/compile.js';
import { createOpenapiDoor } from '../../src/doors/openapi/door.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient } from '../helpers/mcp-client.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { countingServer, json, type CountingServer } from '../doors/openapi/helpers.js';

/** Answers are read loosely here; each assertion names the fields it needs. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SECRET = 'sk-live-policy-0123456789';
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Tracker', version: '1' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  security: [{ key: [] }],
  paths: {
    '/items/': {
      get: { summary: 'List items', responses: { '200': { description: 'ok' } } },
    },
    '/items/{item_id}/': {
      parameters: [{ name: 'item_id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { summary: 'Get an item', responses: { '200': { description: 'ok' } } },
      delete: { summary: 'Delete an item', responses: { '204': { description: 'gone' } } },
    },
  },
};

let server: CountingServer;
let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;
let alice: Client;
let bob: Client;
let aliceHeaders: Record<string, string>;

const tokenOf = (h: Record<string, string>) => h.authorization!.slice('Bearer '.length);

async function rest(method: string, path: string, body?: unknown, headers = owner) {
  const res = await fetch(`${base}/api/v1/${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function call(client: Client, args: Record<string, unknown>) {
  const r = (await client.callTool({ name: 'plane_call', arguments: args })) as {
    isError?: boolean;
    content: Array<{ type: string; text: string }>;
  };
  const text = r.content[0]!.text;
  let parsed: Json = {};
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    /* a success's text need not be JSON */
  }
  return { isError: r.isError === true, text, parsed };
}

const del = (item: string) => ({
  resource: 'items',
  method: 'delete',
  args: { item_id: item },
  confirm: true,
});

const deletes = () => server.requests.filter((r) => r.method === 'DELETE').map((r) => r.url);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-policy-'));
  writeFileSync(join(dir, 'tracker.json'), JSON.stringify(DOC));
  const catalog = await compileSpec(join(dir, 'tracker.json'));
  server = await countingServer((req, res) =>
    req.method === 'DELETE' ? res.writeHead(204).end() : json(res, 200, { ok: true }),
  );
  const door = createOpenapiDoor({
    catalog,
    prefix: 'plane',
    baseUrl: server.url,
    env: { PLANE_KEY: SECRET, PLANE_API_KEY: SECRET },
    logger: silentLogger,
  });
  tk = await testKernel([door]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${addr.port}`;
  owner = await ownerHeaders(tk.kernel);
  aliceHeaders = await agentHeaders(tk.kernel, 'alice');
  alice = await connectClient(`${base}/mcp`, {
    name: 'alice-client',
    token: tokenOf(aliceHeaders),
  });
  bob = await connectClient(`${base}/mcp`, {
    name: 'bob-client',
    token: tokenOf(await agentHeaders(tk.kernel, 'bob')),
  });
});

afterAll(async () => {
  await alice?.close();
  await bob?.close();
  await app?.close();
  await tk?.dispose();
  await server?.close();
});

afterEach(async () => {
  server.requests.length = 0;
  // Each test starts from the defaults.
  const view = await rest('GET', 'policy');
  for (const r of view.body.rules as Array<{ id: string; source: string }>)
    if (r.source === 'owner') await rest('DELETE', `policy/rules/${r.id}`);
  await rest('PUT', 'policy/read-only', { readOnly: false });
  for (const g of (await rest('GET', 'grants')).body.grants as Array<{ id: string }>)
    await rest('DELETE', `grants/${g.id}`);
});

describe('default policy: destructive calls ask the owner', () => {
  it('an openapi DELETE with confirm: true answers approvalRequired and sends nothing', async () => {
    const r = await call(alice, del('d1'));
    expect(r.isError).toBe(true);
    expect(r.parsed).toMatchObject({ code: 'approvalRequired', rule: 'default:destructive' });
    expect(r.parsed.message).toMatch(
      /ask the owner to approve request .* in the Airlock inbox, then call again with the same arguments/,
    );
    expect(typeof r.parsed.approvalID).toBe('string');
    expect(deletes()).toEqual([]);
  });

  it('the inbox shows the ask with a preview of the exact request, secrets redacted', async () => {
    const r = await call(alice, del('d2'));
    const inbox = await rest('GET', 'approvals');
    const item = (inbox.body.approvals as Array<Json>).find((a) => a.id === r.parsed.approvalID)!;
    expect(item).toMatchObject({
      kind: 'policy',
      door: 'plane',
      tool: 'plane_call',
      agent: 'alice',
      rule: 'default:destructive',
      target: 'plane:items.delete',
    });
    expect(item.preview).toMatchObject({
      method: 'DELETE',
      url: `${server.url}/items/d2/`,
      effect: 'destructive',
      targets: ['plane:items.delete', 'DELETE /items/{item_id}/'],
    });
    expect(item.preview.headers['X-API-Key'] ?? item.preview.headers['x-api-key']).toBe(
      '[REDACTED]',
    );
    expect(JSON.stringify(inbox.body)).not.toContain(SECRET);
  });

  it('approved once, the same call runs once; calling it again asks again', async () => {
    const first = await call(alice, del('d3'));
    const id = first.parsed.approvalID as string;
    const approved = await rest('POST', `approvals/${id}/approve`, { scope: 'once' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', scope: 'once' });

    const ran = await call(alice, del('d3'));
    expect(ran.isError).toBe(false);
    expect(deletes()).toEqual(['/items/d3/']);

    const again = await call(alice, del('d3'));
    expect(again.parsed).toMatchObject({ code: 'approvalRequired' });
    expect(again.parsed.approvalID).not.toBe(id);
    expect(deletes()).toEqual(['/items/d3/']);
  });

  it('an approval is bound to the arguments: another item asks on its own', async () => {
    const first = await call(alice, del('d4'));
    await rest('POST', `approvals/${first.parsed.approvalID}/approve`, { scope: 'once' });
    const other = await call(alice, del('d4-other'));
    expect(other.parsed).toMatchObject({ code: 'approvalRequired' });
    expect(other.parsed.approvalID).not.toBe(first.parsed.approvalID);
    expect(deletes()).toEqual([]);
  });

  it("another agent cannot use alice's approval, even with the same arguments", async () => {
    const first = await call(alice, del('d5'));
    await rest('POST', `approvals/${first.parsed.approvalID}/approve`, { scope: 'once' });
    const byBob = await call(bob, del('d5'));
    expect(byBob.parsed).toMatchObject({ code: 'approvalRequired' });
    expect(deletes()).toEqual([]);
    // Alice's approval is still hers to use.
    expect((await call(alice, del('d5'))).isError).toBe(false);
    expect(deletes()).toEqual(['/items/d5/']);
  });

  it('approve for 15 minutes lets that rule, agent and target through, nothing more', async () => {
    const first = await call(alice, del('d6'));
    const approved = await rest('POST', `approvals/${first.parsed.approvalID}/approve`, {
      scope: '15m',
    });
    expect(approved.body).toMatchObject({ scope: '15m' });
    expect((await call(alice, del('d6'))).isError).toBe(false);
    expect((await call(alice, del('d7'))).isError).toBe(false);
    expect(deletes()).toEqual(['/items/d6/', '/items/d7/']);
    // Another agent still asks.
    expect((await call(bob, del('d8'))).parsed).toMatchObject({ code: 'approvalRequired' });
    // The 15-minute approval is a grant the owner sees and can revoke.
    const grants = (await rest('GET', 'grants')).body.grants as Array<Json>;
    const grant = grants.find((g) => g.id === approved.body.grantId)!;
    expect(grant).toMatchObject({ door: 'plane', agent: 'alice' });
    await rest('DELETE', `grants/${grant.id}`);
    expect((await call(alice, del('d9'))).parsed).toMatchObject({ code: 'approvalRequired' });
    expect(deletes()).toEqual(['/items/d6/', '/items/d7/']);
  });

  it('approve for 15 minutes narrowed to the resource covers that resource only (issue 27)', async () => {
    const first = await call(alice, del('n1'));
    const id = first.parsed.approvalID as string;
    const card = ((await rest('GET', 'approvals')).body.approvals as Json[]).find(
      (a) => a.id === id,
    )!;
    expect(card.preview).toMatchObject({ subject: 'resource /items/n1/' });
    const approved = await rest('POST', `approvals/${id}/approve`, { scope: '15m-subject' });
    expect(approved.body).toMatchObject({ scope: '15m-subject' });
    expect((await call(alice, del('n1'))).isError).toBe(false);
    // Another resource, and another agent on the same one, are asked; nothing ran for them.
    expect((await call(alice, del('n2'))).parsed).toMatchObject({ code: 'approvalRequired' });
    expect((await call(bob, del('n1'))).parsed).toMatchObject({ code: 'approvalRequired' });
    // A path value that would reach another resource is named as that resource, not n1.
    expect((await call(alice, del('n1/../n2'))).isError).toBe(true);
    expect(deletes()).toEqual(['/items/n1/']);
  });

  it('a denial reaches the agent with the reason as approvalDenied', async () => {
    const first = await call(alice, del('d10'));
    const denied = await rest('POST', `approvals/${first.parsed.approvalID}/deny`, {
      reason: 'that item is the invoice archive',
    });
    expect(denied.status).toBe(200);
    const again = await call(alice, del('d10'));
    expect(again.parsed).toMatchObject({
      code: 'approvalDenied',
      reason: 'that item is the invoice archive',
    });
    expect(again.parsed.message).toContain('that item is the invoice archive');
    expect(deletes()).toEqual([]);
  });

  it('an agent cannot approve its own ask: the owner routes refuse its token', async () => {
    const first = await call(alice, del('d11'));
    const self = await rest(
      'POST',
      `approvals/${first.parsed.approvalID}/approve`,
      { scope: 'once' },
      aliceHeaders,
    );
    expect(self.status).toBe(403);
    expect(self.body).toMatchObject({ code: 'notAuthorized' });
    expect((await call(alice, del('d11'))).parsed).toMatchObject({ code: 'approvalRequired' });
    const rule = await rest('POST', 'policy/rules', { decision: 'allow' }, aliceHeaders);
    expect(rule.status).toBe(403);
    expect(deletes()).toEqual([]);
  });

  it('a DELETE without confirm is the agent’s own refusal: the owner is not asked', async () => {
    const before = (await rest('GET', 'approvals')).body.approvals.length as number;
    const r = await call(alice, { resource: 'items', method: 'delete', args: { item_id: 'x' } });
    expect(r.parsed).toMatchObject({ code: 'confirmRequired' });
    expect((await rest('GET', 'approvals')).body.approvals).toHaveLength(before);
  });

  it('reads run without asking', async () => {
    const r = await call(alice, { resource: 'items', method: 'list' });
    expect(r.isError).toBe(false);
    expect(server.requests.map((q) => q.method)).toEqual(['GET']);
  });
});

describe('event streams', () => {
  /** Reads an SSE stream until `until` appears in it. */
  async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: string) {
    let text = '';
    while (!text.includes(until)) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    return text;
  }

  it("an agent's stream carries its own calls, never another agent's asks or the audit trail", async () => {
    const ac = new AbortController();
    const open = async (headers: Record<string, string>) =>
      (await fetch(`${base}/api/v1/events`, { headers, signal: ac.signal })).body!.getReader();
    const bobHeaders = await agentHeaders(tk.kernel, 'bob-watcher');
    const bobStream = await open(bobHeaders);
    const ownerStream = await open(owner);
    const asked = await call(alice, del('secret-item'));
    const id = String(asked.parsed.approvalID);
    const watcher = await connectClient(`${base}/mcp`, { token: tokenOf(bobHeaders) });
    await call(watcher, { resource: 'items', method: 'list' });
    const bobSaw = await readUntil(bobStream, '"agent":"bob-watcher"');
    const ownerSaw = await readUntil(ownerStream, id);
    ac.abort();
    await watcher.close();
    expect(bobSaw).toContain('"event":"toolCalled"');
    expect(bobSaw).not.toContain(id);
    expect(bobSaw).not.toContain('secret-item');
    expect(bobSaw).not.toContain('auditRecorded');
    expect(bobSaw).not.toContain('"agent":"alice"');
    expect(ownerSaw).toContain('approvalRequested');
  });
});

describe('rules', () => {
  it('a deny rule refuses with its reason, before any request', async () => {
    const added = await rest('POST', 'policy/rules', {
      door: 'openapi',
      target: 'plane:items.get',
      decision: 'deny',
      reason: 'items are private',
    });
    expect(added.status).toBe(201);
    const r = await call(alice, { resource: 'items', method: 'get', args: { item_id: 'a' } });
    expect(r.parsed).toMatchObject({ code: 'notAuthorized', rule: added.body.id });
    expect(r.parsed.message).toContain('items are private');
    expect(server.requests).toEqual([]);
  });

  it('the first matching rule wins, and a rule may name the agent', async () => {
    await rest('POST', 'policy/rules', { agent: 'bob', door: 'plane', decision: 'deny' });
    await rest('POST', 'policy/rules', { door: 'plane', decision: 'allow', effect: 'destructive' });
    expect((await call(alice, del('r1'))).isError).toBe(false);
    expect((await call(bob, del('r2'))).parsed).toMatchObject({ code: 'notAuthorized' });
    expect(deletes()).toEqual(['/items/r1/']);
  });

  it('a rate of 10/minute answers the 11th call busy with retryAfterMs', async () => {
    await rest('POST', 'policy/rules', {
      tool: 'plane_call',
      decision: 'allow',
      rate: '10/minute',
    });
    for (let i = 0; i < 10; i++)
      expect((await call(alice, { resource: 'items', method: 'list' })).isError).toBe(false);
    const eleventh = await call(alice, { resource: 'items', method: 'list' });
    expect(eleventh.parsed.code).toBe('busy');
    expect(eleventh.parsed.retryAfterMs).toBeGreaterThan(0);
    expect(eleventh.parsed.retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(server.requests).toHaveLength(10);
    // The rate is per agent: bob has his own.
    expect((await call(bob, { resource: 'items', method: 'list' })).isError).toBe(false);
  });

  it('read-only for the door refuses writes and destructive calls, reads still work', async () => {
    const set = await rest('PUT', 'policy/read-only', { readOnly: ['openapi'] });
    expect(set.body.readOnly).toEqual(['openapi']);
    expect((await call(alice, del('ro'))).parsed).toMatchObject({
      code: 'notAuthorized',
      rule: 'readOnly',
    });
    expect((await call(alice, { resource: 'items', method: 'list' })).isError).toBe(false);
  });

  it('owner rules can be moved and removed; bad rules say what to fix', async () => {
    const a = await rest('POST', 'policy/rules', { decision: 'deny', tool: 'plane_r*' });
    const b = await rest('POST', 'policy/rules', { decision: 'allow', tool: 'plane_d*' });
    const moved = await rest('POST', `policy/rules/${b.body.id}/move`, { position: 1 });
    expect(moved.body.position).toBe(1);
    const order = (await rest('GET', 'policy')).body.rules.map((r: { id: string }) => r.id);
    expect(order).toEqual([b.body.id, a.body.id]);
    const bad = await rest('POST', 'policy/rules', { decision: 'maybe', rate: 'fast' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('malformedRequest');
    expect(bad.body.message).toMatch(/decision|rate/);
    expect((await rest('DELETE', `policy/rules/${a.body.id}`)).status).toBe(200);
    expect((await rest('DELETE', `policy/rules/${a.body.id}`)).status).toBe(404);
  });

  it('policy/test says what would happen and which rule decides', async () => {
    const rule = await rest('POST', 'policy/rules', {
      door: 'plane',
      target: 'plane:items.*',
      decision: 'ask',
    });
    const t = await rest('POST', 'policy/test', {
      door: 'openapi',
      tool: 'plane_call',
      agent: 'alice',
      target: 'plane:items.get',
      effect: 'read',
    });
    expect(t.body).toMatchObject({ decision: 'ask', rule: rule.body.id });
    // A mounted tool's effect and targets are its own for the arguments given.
    const d = await rest('POST', 'policy/test', {
      door: 'plane',
      tool: 'plane_call',
      args: { resource: 'items', method: 'list' },
    });
    expect(d.body).toMatchObject({
      decision: 'ask',
      rule: rule.body.id,
      effect: 'read',
      targets: expect.arrayContaining(['plane:items.list']),
    });
    const none = await rest('POST', 'policy/test', { door: 'plane', tool: 'plane_call' });
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/give them as `args`/);
  });
});

describe('audit', () => {
  it('every decision is audited with the rule that made it, and the audit filters by both', async () => {
    const rule = await rest('POST', 'policy/rules', {
      tool: 'plane_call',
      target: 'plane:items.list',
      decision: 'deny',
    });
    await call(alice, { resource: 'items', method: 'list' });
    await call(alice, del('audited'));
    const byRule = await rest('GET', `audit?rule=${rule.body.id}`);
    expect(byRule.body.entries).toHaveLength(1);
    expect(byRule.body.entries[0]).toMatchObject({
      decision: 'deny',
      result: 'notAuthorized',
      connection: expect.stringMatching(/^agent:alice/),
    });
    const asked = await rest('GET', 'audit?decision=ask');
    expect(
      (asked.body.entries as Array<Record<string, unknown>>).some(
        (e) => e.rule === 'default:destructive' && e.result === 'approvalRequired',
      ),
    ).toBe(true);
    const owners = await rest('GET', 'audit?door=airlock');
    expect(
      (owners.body.entries as Array<Record<string, unknown>>).some(
        (e) => e.tool === 'policy.add' && e.connection === 'owner',
      ),
    ).toBe(true);
    expect((await rest('GET', 'audit?decision=perhaps')).status).toBe(400);
    // Newest first, for "recent decisions" of a rule.
    await call(alice, { resource: 'items', method: 'list' });
    const newest = await rest('GET', `audit?rule=${rule.body.id}&order=desc&limit=1`);
    expect(newest.body.entries).toHaveLength(1);
    expect(newest.body.entries[0].id).toBeGreaterThan(byRule.body.entries[0].id);
  });
  it('urgent is for ask rules only: kept and listed on an ask rule, refused on a deny rule', async () => {
    const refused = await rest('POST', 'policy/rules', {
      door: 'plane',
      decision: 'deny',
      urgent: true,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('`urgent` is for `decision: "ask"` rules only');
    const added = await rest('POST', 'policy/rules', {
      door: 'plane',
      tool: 'never_called_here',
      decision: 'ask',
      urgent: true,
      force: true,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    const listed = await rest('GET', 'policy');
    expect((listed.body.rules as Json[]).find((r) => r.id === added.body.id)).toMatchObject({
      decision: 'ask',
      urgent: true,
    });
    expect((await rest('DELETE', `policy/rules/${added.body.id}`)).status).toBe(200);
  });
});
