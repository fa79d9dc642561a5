import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { ownerHeaders } from '../helpers/principals.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()]);
  app = createHttpApp({
    kernel: tk.kernel,
    logger: silentLogger,
    maxBodyBytes: 64 * 1024,
    keepAliveMs: 100,
    // These tests are about the transport; test/transport/authority.test.ts covers who may call.
    allowAnonymous: true,
  });
  owner = await ownerHeaders(tk.kernel);
  const addr = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${addr.port}`;
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

const LEDGER_TOOLS = [
  'ledger_append',
  'ledger_count',
  'ledger_echo',
  'ledger_query_operation',
  'ledger_read',
  'ledger_request_write_access',
];

const v2Client = (mode: 'legacy' | 'modern', path = '/mcp') =>
  connectClient(new URL(path, base), {
    name: 'test-client',
    version: '1.0.0',
    ...(mode === 'modern' ? { pin: MODERN_PROTOCOL } : {}),
  });

describe('MCP over streamable HTTP', () => {
  it('answers tools/list to an SDK v2 client in the 2025 era', async () => {
    const client = await v2Client('legacy');
    expect(client.getProtocolEra()).toBe('legacy');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(LEDGER_TOOLS);
    await client.close();
  });

  it('answers tools/list and tools/call to an SDK v2 client in the 2026-07-28 era', async () => {
    const client = await v2Client('modern');
    expect(client.getProtocolEra()).toBe('modern');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(LEDGER_TOOLS);
    const r = await client.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } });
    expect(r.structuredContent).toEqual({ text: 'hi' });
    await client.close();
  });

  it('answers tools/list to an SDK v1 (2025-era) client', async () => {
    const client = new V1Client({ name: 'v1', version: '1.0.0' });
    await client.connect(new V1Transport(new URL('/mcp', base)));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(LEDGER_TOOLS);
    const r = await client.callTool({ name: 'ledger_echo', arguments: { text: 'v1' } });
    expect(r.structuredContent).toEqual({ text: 'v1' });
    await client.close();
  });

  it('serves one door at /mcp/<door> and 404s an unknown door', async () => {
    const client = await v2Client('legacy', '/mcp/ledger');
    expect((await client.listTools()).tools).toHaveLength(LEDGER_TOOLS.length);
    await client.close();
    const res = await fetch(`${base}/mcp/nope`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(404);
  });

  it('answers an unknown field as a tool error naming it, not a crash', async () => {
    const client = await v2Client('legacy');
    const r = await client.callTool({ name: 'ledger_echo', arguments: { text: 'x', extra: 1 } });
    expect(r.isError).toBe(true);
    expect(toolJson(r)).toMatchObject({ code: 'malformedRequest' });
    const wrong = await client.callTool({ name: 'ledger_echo', arguments: { text: 42 } });
    expect(toolJson(wrong)).toMatchObject({ code: 'malformedRequest' });
    await client.close();
  });

  it('keys grants by connection: a 2025 session does not see another session’s grant', async () => {
    const a = await v2Client('legacy');
    const b = await v2Client('legacy');
    expect(
      toolJson(await a.callTool({ name: 'ledger_request_write_access', arguments: {} })).code,
    ).toBe('approvalRequired');
    const pending = await tk.kernel.consent.pending();
    const mine = pending.find((p) => p.connection.startsWith('agent:anonymous/session:'))!;
    await tk.kernel.consent.approve(mine.id, null);
    const append = {
      name: 'ledger_append',
      arguments: { operationID: randomUUID(), account: 'conn', amount: 1, expectedVersion: null },
    };
    expect(toolJson(await a.callTool(append))).toMatchObject({ committedVersion: 1 });
    expect(
      toolJson(
        await b.callTool({
          ...append,
          arguments: { ...append.arguments, operationID: randomUUID() },
        }),
      ).code,
    ).toBe('notAuthorized');
    await a.close();
    await b.close();
  });
});

describe('HTTP guards and bad input', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
    });

  it('answers malformed JSON with a JSON-RPC parse error and keeps serving', async () => {
    const res = await post('/mcp', '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: -32700 } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('refuses an oversized body with 413 before parsing it', async () => {
    const res = await post('/mcp', JSON.stringify({ pad: 'x'.repeat(100 * 1024) }));
    expect(res.status).toBe(413);
    const rest = await post(
      '/api/v1/approvals/x/approve',
      JSON.stringify({ pad: 'x'.repeat(100 * 1024) }),
      owner,
    );
    expect(rest.status).toBe(413);
    expect(await rest.json()).toMatchObject({ status: 413, code: 'requestTooLarge' });
  });

  it('answers a foreign Origin with 403', async () => {
    const res = await post('/mcp', '{}', { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    const api = await fetch(`${base}/api/v1/approvals`, {
      headers: { origin: 'https://evil.example' },
    });
    expect(api.status).toBe(403);
    const local = await fetch(`${base}/api/v1/approvals`, { headers: { origin: base, ...owner } });
    expect(local.status).toBe(200);
  });

  it('answers a foreign Host with 403 (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${base}/api/v1/approvals`,
        { headers: { host: 'attacker.example' } },
        (res) => resolve(res.statusCode ?? 0),
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('answers REST errors as {status, code, message}', async () => {
    const res = await fetch(`${base}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      status: 404,
      code: 'notFound',
      message: expect.stringContaining('openapi.json'),
    });
    const bad = await post('/api/v1/approvals/x/approve', '{nope', owner);
    expect(await bad.json()).toMatchObject({ status: 400, code: 'malformedRequest' });
  });

  it('publishes the mounted REST routes in /api/v1/openapi.json', async () => {
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/approvals',
        '/api/v1/approvals/{id}/approve',
        '/api/v1/grants',
        '/api/v1/audit',
        '/api/v1/events',
      ]),
    );
  });
});

describe('REST approvals', () => {
  it('approves a pending request through the REST API and the tool then answers with the grant', async () => {
    const client = await v2Client('modern');
    const ask = () =>
      client.callTool({ name: 'ledger_request_write_access', arguments: {} }).then(toolJson);
    const first = await ask();
    expect(first.code).toBe('approvalRequired');
    const list = (await (await fetch(`${base}/api/v1/approvals`, { headers: owner })).json()) as {
      approvals: { id: string; connection: string }[];
    };
    const mine = list.approvals.find((a) => a.id === first.approvalID)!;
    expect(mine.connection).toBe('agent:anonymous');
    // The inbox line names the client that asks.
    expect((mine as unknown as { summary: string }).summary).toContain('test-client');
    const res = await fetch(`${base}/api/v1/approvals/${mine.id}/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...owner },
      body: JSON.stringify({ resource: 'main' }),
    });
    expect(res.status).toBe(200);
    expect(await ask()).toMatchObject({ grantID: expect.any(String) });
    const grants = (await (await fetch(`${base}/api/v1/grants`, { headers: owner })).json()) as {
      grants: { id: string }[];
    };
    expect(grants.grants.length).toBeGreaterThan(0);
    await client.close();
  });
});

// The framing, read on the owner's stream (it carries every event; an agent's
// carries only its own, sse-visibility.test.ts and job-ownership.test.ts).
describe('event stream', () => {
  /** Reads `count` frames; `afterFirst` runs once the first (the snapshot) is in. */
  async function readFrames(
    res: Response,
    count: number,
    afterFirst?: () => void,
  ): Promise<{ id: number; name?: string; data: Record<string, unknown> }[]> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    const frames: { id: number; name?: string; data: Record<string, unknown> }[] = [];
    while (frames.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        const name = /^event: (.*)$/m.exec(block)?.[1];
        if (id && data)
          frames.push({
            id: Number(id),
            ...(name ? { name } : {}),
            data: JSON.parse(data) as Record<string, unknown>,
          });
        if (frames.length === 1 && afterFirst) {
          afterFirst();
          afterFirst = undefined;
        }
      }
    }
    await reader.cancel();
    return frames;
  }

  it('sends a snapshot first, then events with ids', async () => {
    const ac = new AbortController();
    const res = await fetch(`${base}/api/v1/events`, { headers: owner, signal: ac.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = await readFrames(res, 2, () =>
      tk.kernel.events.publish({ event: 'probe', n: 1 }),
    );
    expect(frames[0]!.data.event).toBe('snapshot');
    expect(frames[0]!.data).toHaveProperty('jobs');
    expect(frames[1]!.data).toEqual({ event: 'probe', n: 1 });
    expect(frames[1]!.id).toBeGreaterThan(frames[0]!.id);
    expect(frames.every((f) => f.name === undefined)).toBe(true);
    ac.abort();
  });

  it('GET /events (the Koharu wire) names every frame in PascalCase, same data', async () => {
    const ac = new AbortController();
    const res = await fetch(`${base}/events`, { headers: owner, signal: ac.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = await readFrames(res, 2, () =>
      tk.kernel.events.publish({ event: 'jobFinished', id: 'j1' }),
    );
    expect(frames[0]).toMatchObject({ name: 'Snapshot', data: { event: 'snapshot' } });
    expect(frames[1]).toMatchObject({
      name: 'JobFinished',
      data: { event: 'jobFinished', id: 'j1' },
    });
    ac.abort();
  });

  it('replays from Last-Event-ID without a snapshot when the ring reaches back', async () => {
    const start = tk.kernel.events.lastId;
    tk.kernel.events.publish({ event: 'replayMe', n: 1 });
    tk.kernel.events.publish({ event: 'replayMe', n: 2 });
    const ac = new AbortController();
    const res = await fetch(`${base}/api/v1/events`, {
      headers: { ...owner, 'last-event-id': String(start) },
      signal: ac.signal,
    });
    const frames = await readFrames(res, 2);
    expect(frames.map((f) => f.data)).toEqual([
      { event: 'replayMe', n: 1 },
      { event: 'replayMe', n: 2 },
    ]);
    expect(frames[0]!.id).toBe(start + 1);
    ac.abort();
  });

  it('sends keep-alive comments', async () => {
    const ac = new AbortController();
    const res = await fetch(`${base}/api/v1/events`, { signal: ac.signal });
    const reader = res.body!.getReader();
    let seen = '';
    const deadline = Date.now() + 2000;
    while (!seen.includes(': keep-alive') && Date.now() < deadline) {
      const { value } = await reader.read();
      seen += new TextDecoder().decode(value);
    }
    expect(seen).toContain(': keep-alive');
    ac.abort();
  });
});
