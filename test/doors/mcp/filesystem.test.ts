/**
 * The real `@modelcontextprotocol/server-filesystem` from npm behind the mcp
 * door, on a temp folder, reached by an agent over MCP/HTTP: reads run under
 * the default policy, destructive tools ask the owner first, a retried
 * operationID changes the file once, and a deny rule blocks with its reason.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  serverBin,
  type GatewayWorkspace,
  type Json,
} from './helpers.js';
import { agentHeaders } from '../../helpers/principals.js';

let ws: GatewayWorkspace;
let alice: Client;
let dir: string;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-fs-')));
  ws = await gatewayWorkspace({
    fs: { command: process.execPath, args: [serverBin('filesystem'), dir] },
  });
  alice = await ws.agent('alice');
}, 30_000);

afterAll(async () => {
  await ws?.close();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  for (const r of (await ws.rest('GET', 'policy')).body.rules as Array<{
    id: string;
    source: string;
  }>)
    if (r.source === 'owner') await ws.rest('DELETE', `policy/rules/${r.id}`);
});

const approve = async (approvalID: string) => {
  const r = await ws.rest('POST', `approvals/${approvalID}/approve`, { scope: 'once' });
  expect(r.status).toBe(200);
};

describe('filesystem upstream', () => {
  it('lists the upstream tools as fs_<tool> with their schemas, effects and an operationID for changing tools', async () => {
    const { tools } = await alice.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('fs_read_text_file')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(byName.get('fs_read_text_file')?.outputSchema).toBeDefined();
    expect(Object.keys(byName.get('fs_read_text_file')!.inputSchema.properties!)).not.toContain(
      'operationID',
    );
    const write = byName.get('fs_write_file')!;
    expect(write.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(Object.keys(write.inputSchema.properties!)).toEqual(['path', 'content', 'operationID']);
    expect(byName.get('fs_create_directory')?.annotations).toMatchObject({
      destructiveHint: false,
    });
  });

  it('read_text_file runs under the default policy', async () => {
    writeFileSync(join(dir, 'hello.txt'), 'hello world');
    const r = await callTool(alice, 'fs_read_text_file', { path: join(dir, 'hello.txt') });
    expect(r.isError).toBeFalsy();
    expect(r.content[0]!.text).toBe('hello world');
    expect(r.structuredContent).toMatchObject({ content: 'hello world' });
  });

  it('arguments of the wrong type are refused before anything is forwarded, naming the field', async () => {
    const r = await callTool(alice, 'fs_read_text_file', { path: 42 });
    expect(r.isError).toBe(true);
    expect(errorOf(r)).toMatchObject({ code: 'malformedRequest' });
    expect(errorOf(r).message).toMatch(/'path' must be string; got the number 42/);
    const missing = await callTool(alice, 'fs_write_file', { path: join(dir, 'x.txt') });
    expect(errorOf(missing).message).toMatch(/'content' must be given/);
  });

  it('write_file answers approvalRequired until the owner approves once, with the tool and arguments in the preview', async () => {
    const path = join(dir, 'a.txt');
    const asked = await callTool(alice, 'fs_write_file', { path, content: 'one' });
    expect(errorOf(asked)).toMatchObject({ code: 'approvalRequired', rule: 'default:destructive' });
    expect(existsSync(path)).toBe(false);
    const inbox = await ws.rest('GET', 'approvals');
    const item = (inbox.body.approvals as Json[]).find((a) => a.id === errorOf(asked).approvalID)!;
    expect(item).toMatchObject({ door: 'fs', tool: 'fs_write_file', target: 'fs:write_file' });
    expect(item.preview).toMatchObject({
      upstream: 'fs',
      tool: 'write_file',
      arguments: { path, content: 'one' },
    });
    await approve(errorOf(asked).approvalID);
    const ran = await callTool(alice, 'fs_write_file', { path, content: 'one' });
    expect(ran.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('one');
  });

  it('"Approve 15 minutes" narrowed to the file covers that file only: another file or another agent is asked (issue 27)', async () => {
    const path = join(dir, 'narrow.txt');
    const other = join(dir, 'narrow-other.txt');
    const asked = await callTool(alice, 'fs_write_file', { path, content: 'one' });
    const id = errorOf(asked).approvalID as string;
    const item = ((await ws.rest('GET', 'approvals')).body.approvals as Json[]).find(
      (a) => a.id === id,
    )!;
    expect(item.preview).toMatchObject({ subject: `file ${path}` });
    const r = await ws.rest('POST', `approvals/${id}/approve`, { scope: '15m-subject' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ scope: '15m-subject' });
    // The same file with other content runs without asking.
    expect((await callTool(alice, 'fs_write_file', { path, content: 'two' })).isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('two');
    // Another file is asked; nothing is written.
    const elsewhere = await callTool(alice, 'fs_write_file', { path: other, content: 'x' });
    expect(errorOf(elsewhere)).toMatchObject({ code: 'approvalRequired' });
    expect(existsSync(other)).toBe(false);
    // A second agent on the same file is asked; the file keeps alice's content.
    const bob = await ws.agent('bob-narrow');
    const byBob = await callTool(bob, 'fs_write_file', { path, content: 'bob' });
    expect(errorOf(byBob)).toMatchObject({ code: 'approvalRequired' });
    expect(readFileSync(path, 'utf8')).toBe('two');
  });

  it('a tool that declares no `path` (move_file) names no file: its ask cannot be narrowed', async () => {
    const source = join(dir, 'nn1.txt');
    writeFileSync(source, 'x');
    const asked = await callTool(alice, 'fs_move_file', {
      source,
      destination: join(dir, 'nn2.txt'),
    });
    const id = errorOf(asked).approvalID as string;
    const item = ((await ws.rest('GET', 'approvals')).body.approvals as Json[]).find(
      (a) => a.id === id,
    )!;
    expect(item.preview.subject).toBeUndefined();
    const r = await ws.rest('POST', `approvals/${id}/approve`, { scope: '15m-subject' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'malformedRequest' });
    await ws.rest('POST', `approvals/${id}/deny`, { reason: 'test' });
  });

  it('move_file answers approvalRequired until the owner approves once', async () => {
    const source = join(dir, 'm1.txt');
    const destination = join(dir, 'm2.txt');
    writeFileSync(source, 'moving');
    const asked = await callTool(alice, 'fs_move_file', { source, destination });
    expect(errorOf(asked)).toMatchObject({ code: 'approvalRequired' });
    expect(existsSync(source)).toBe(true);
    await approve(errorOf(asked).approvalID);
    const ran = await callTool(alice, 'fs_move_file', { source, destination });
    expect(ran.isError).toBeFalsy();
    expect(existsSync(source)).toBe(false);
    expect(readFileSync(destination, 'utf8')).toBe('moving');
  });

  it('the file changes exactly once when the agent retries with the same operationID', async () => {
    const path = join(dir, 'once.txt');
    const args = { path, content: 'from the agent', operationID: 'op-once-1' };
    const asked = await callTool(alice, 'fs_write_file', args);
    await approve(errorOf(asked).approvalID);
    const first = await callTool(alice, 'fs_write_file', args);
    expect(first.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('from the agent');
    // Someone else changes the file; a retry must not write it again.
    writeFileSync(path, 'changed by a person');
    let retry = await callTool(alice, 'fs_write_file', args);
    if (retry.isError && errorOf(retry).code === 'approvalRequired') {
      await approve(errorOf(retry).approvalID);
      retry = await callTool(alice, 'fs_write_file', args);
    }
    expect(retry).toEqual(first);
    expect(readFileSync(path, 'utf8')).toBe('changed by a person');
  });

  it('a retry of a committed write with the same operationID and arguments answers the first result without asking the owner again; other arguments are malformedRequest', async () => {
    const path = join(dir, 'replayed.txt');
    const args = { path, content: 'written once', operationID: 'op-replay-1' };
    const asked = await callTool(alice, 'fs_write_file', args);
    expect(errorOf(asked)).toMatchObject({ code: 'approvalRequired' });
    await approve(errorOf(asked).approvalID);
    const first = await callTool(alice, 'fs_write_file', args);
    expect(first.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('written once');
    writeFileSync(path, 'changed by a person');
    const pendingBefore = (await ws.rest('GET', 'approvals')).body.approvals as Json[];

    // The response was lost; the agent retries: its receipt, no new ask, no second write.
    const retry = await callTool(alice, 'fs_write_file', args);
    expect(retry).toEqual(first);
    expect(readFileSync(path, 'utf8')).toBe('changed by a person');
    const other = await callTool(alice, 'fs_write_file', { ...args, content: 'something else' });
    expect(errorOf(other)).toMatchObject({ code: 'malformedRequest', field: 'operationID' });
    expect(errorOf(other).message).toMatch(/already used for a different request/);
    expect(readFileSync(path, 'utf8')).toBe('changed by a person');
    const pendingAfter = (await ws.rest('GET', 'approvals')).body.approvals as Json[];
    expect(pendingAfter.map((a) => a.id)).toEqual(pendingBefore.map((a) => a.id));
  });

  it('a deny rule on fs:* blocks every tool with its reason; nothing is forwarded', async () => {
    const added = await ws.rest('POST', 'policy/rules', {
      target: 'fs:*',
      decision: 'deny',
      reason: 'the files are off limits today',
    });
    expect(added.status).toBe(201);
    writeFileSync(join(dir, 'secret.txt'), 'x');
    for (const [tool, args] of [
      ['fs_read_text_file', { path: join(dir, 'secret.txt') }],
      ['fs_write_file', { path: join(dir, 'denied.txt'), content: 'no' }],
    ] as const) {
      const r = await callTool(alice, tool, args);
      expect(errorOf(r)).toMatchObject({ code: 'notAuthorized', rule: added.body.id });
      expect(errorOf(r).message).toContain('the files are off limits today');
    }
    expect(existsSync(join(dir, 'denied.txt'))).toBe(false);
  });

  it('every call is audited with the upstream, the tool, the arguments digest, the decision and the outcome', async () => {
    const audit = await ws.rest('GET', 'audit?door=fs');
    const entries = audit.body.entries as Json[];
    const write = entries.find((e) => e.tool === 'fs_write_file' && e.result === 'ok');
    expect(write).toMatchObject({ door: 'fs', decision: 'ask' });
    expect(typeof write!.argsDigest).toBe('string');
    expect(entries.some((e) => e.result === 'approvalRequired')).toBe(true);
    // Reads are audited too: a gateway keeps one trail of everything it forwards.
    expect(entries.find((e) => e.tool === 'fs_read_text_file' && e.result === 'ok')).toMatchObject({
      door: 'fs',
      decision: 'allow',
      rule: 'default:read',
    });
  });

  it('GET /api/v1/upstreams shows the owner the state, the last stderr lines and the tools with their effects', async () => {
    const r = await ws.rest('GET', 'upstreams');
    expect(r.status).toBe(200);
    const [fs] = r.body.upstreams as Json[];
    expect(fs).toMatchObject({ name: 'fs', transport: 'stdio', state: 'running', restarts: 0 });
    expect(fs!.stderr.join('\n')).toContain('Secure MCP Filesystem Server running on stdio');
    expect(fs!.tools).toContainEqual({
      name: 'fs_write_file',
      upstreamTool: 'write_file',
      effect: 'destructive',
      source: 'annotations',
      annotated: 'destructive',
      review: 'reviewed',
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      reviewedAt: expect.any(Number),
    });
    expect(fs!.uncertainWrites).toEqual([]);
  });

  it('agents can neither see the upstreams nor override an effect', async () => {
    const agent = await agentHeaders(ws.tk.kernel, 'sneaky');
    expect((await ws.rest('GET', 'upstreams', undefined, agent)).status).toBe(403);
    const put = await ws.rest(
      'PUT',
      'upstreams/fs/tools/write_file/effect',
      { effect: 'read' },
      agent,
    );
    expect(put.status).toBe(403);
    const view = (await ws.rest('GET', 'upstreams')).body.upstreams[0].tools as Json[];
    expect(view.find((t) => t.upstreamTool === 'write_file')).toMatchObject({
      effect: 'destructive',
    });
  });

  it('the owner overrides an effect: write_file as a write runs without asking, and back to its annotations it asks again', async () => {
    const set = await ws.rest('PUT', 'upstreams/fs/tools/write_file/effect', { effect: 'write' });
    expect(set.status).toBe(200);
    expect(set.body.tool).toMatchObject({
      effect: 'write',
      source: 'override',
      annotated: 'destructive',
    });
    const { tools } = await alice.listTools();
    expect(tools.find((t) => t.name === 'fs_write_file')?.annotations).toMatchObject({
      destructiveHint: false,
    });
    const path = join(dir, 'override.txt');
    const ran = await callTool(alice, 'fs_write_file', { path, content: 'no ask' });
    expect(ran.isError).toBeFalsy();
    expect(readFileSync(path, 'utf8')).toBe('no ask');
    expect(
      (await ws.rest('PUT', 'upstreams/fs/tools/write_file/effect', { effect: null })).status,
    ).toBe(200);
    const asked = await callTool(alice, 'fs_write_file', { path, content: 'asks again' });
    expect(errorOf(asked)).toMatchObject({ code: 'approvalRequired' });
    const unknown = await ws.rest('PUT', 'upstreams/fs/tools/nope/effect', { effect: 'read' });
    expect(unknown).toMatchObject({ status: 404, body: { code: 'notFound' } });
    const bad = await ws.rest('PUT', 'upstreams/fs/tools/write_file/effect', { effect: 'maybe' });
    expect(bad.status).toBe(400);
    // Each override is a policy change: audited as the owner's, in order (the bad body never applied).
    const trail = (await ws.rest('GET', 'audit?door=mcp')).body.entries as Json[];
    const overrides = trail.filter((e) => e.tool === 'upstream.effect');
    expect(overrides.map((e) => [e.connection, e.result])).toEqual([
      ['owner', 'ok'],
      ['owner', 'ok'],
      ['owner', 'notFound'],
    ]);
  });
});
