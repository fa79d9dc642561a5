/**
 * HTTP upstreams are bounded like stdio ones: a hostile streamable-HTTP
 * upstream on loopback (a bare node:http server, no SDK) that answers 30 MiB
 * of JSON, or opens an SSE event that never ends, gets its answer cut at
 * `limits.upstreamMessageBytes`: that one call answers `resultTooLarge`, a
 * call made at the same time succeeds, and the upstream is neither
 * restarted nor given a new session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/client';
import { callTool, errorOf, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';
import { boundedFetch } from '../../../src/doors/mcp/upstream/http-bounded.js';

const SESSION = 'hostile-session-1';
let http: Server;
let url: string;
let ws: GatewayWorkspace;
let alice: Client;
const sessionsOpened: string[] = [];
/** Bytes the hostile upstream managed to write into cut streams. */
let endlessWritten = 0;
let endlessClosed = false;

const tool = (name: string) => ({
  name,
  description: `hostile ${name}`,
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
  annotations: { readOnlyHint: true },
});

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res: ServerResponse, message: unknown) {
  res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': SESSION });
  res.end(JSON.stringify(message));
}

/** 30 MiB of JSON, written in 1 MiB pieces as the socket drains. */
async function huge(res: ServerResponse, id: unknown) {
  res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': SESSION });
  const piece = 'x'.repeat(1024 * 1024);
  const ok = (chunk: string) =>
    new Promise<void>((resolve) => (res.write(chunk) ? resolve() : res.once('drain', resolve)));
  await ok(
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
  );
  for (let i = 0; i < 30 && !res.destroyed; i++) await ok(piece);
  res.end('"}]}}');
}

/** One SSE event whose data never ends, until the reader goes away. */
async function endless(res: ServerResponse, id: unknown) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SESSION });
  res.write(
    `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
  );
  res.on('close', () => (endlessClosed = true));
  const piece = 'y'.repeat(256 * 1024);
  while (!res.destroyed && !res.writableEnded) {
    const drained = res.write(piece);
    endlessWritten += piece.length;
    if (!drained)
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done).off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
  }
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const message = JSON.parse(await bodyOf(req)) as {
    id?: unknown;
    method: string;
    params?: { name?: string; arguments?: { n?: number } };
  };
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const { id, method } = message;
  if (method === 'initialize') {
    sessionsOpened.push(SESSION);
    return json(res, {
      jsonrpc: '2.0',
      id,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'hostile', version: '1.0.0' },
      },
    });
  }
  if (method === 'tools/list')
    return json(res, {
      jsonrpc: '2.0',
      id,
      result: { tools: ['huge', 'endless', 'slow', 'echo'].map(tool) },
    });
  if (method === 'tools/call') {
    const name = message.params?.name;
    if (name === 'huge') return huge(res, id);
    if (name === 'endless') return endless(res, id);
    if (name === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
    return json(res, {
      jsonrpc: '2.0',
      id,
      result: {
        content: [{ type: 'text', text: `${name} ${message.params?.arguments?.n ?? ''}` }],
      },
    });
  }
  return json(res, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
}

beforeAll(async () => {
  http = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  ws = await gatewayWorkspace(
    { hostile: { url } },
    {
      kernel: {
        limits: {
          hostile: { responseBytes: 64 * 1024 * 1024, resultTokens: 10_000_000, timeoutMs: 60_000 },
        },
      },
    },
  );
  alice = await ws.agent('alice');
}, 30_000);

afterAll(async () => {
  await ws?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
});

describe('bounded HTTP upstream messages', () => {
  it('a 30 MiB JSON answer is resultTooLarge, a concurrent call succeeds, the upstream is not restarted', async () => {
    const before = ws.gateway.runtime('hostile')!.upstream.status();
    expect(before.state).toBe('running');
    const opened = sessionsOpened.length;
    const [big, slow] = await Promise.all([
      callTool(alice, 'hostile_huge', {}),
      callTool(alice, 'hostile_slow', { n: 1 }),
    ]);
    expect(errorOf(big)).toMatchObject({ code: 'resultTooLarge' });
    expect(errorOf(big).message).toMatch(/over the 8388608-byte limit/);
    expect(slow.isError).toBeFalsy();
    expect(slow.content[0]!.text).toBe('slow 1');
    expect((await callTool(alice, 'hostile_echo', { n: 2 })).content[0]!.text).toBe('echo 2');
    expect(ws.gateway.runtime('hostile')!.upstream.status()).toMatchObject({
      state: 'running',
      restarts: 0,
    });
    expect(sessionsOpened.length).toBe(opened);
  }, 60_000);

  it('an SSE event that never ends is cut at the limit: resultTooLarge, the stream closed, others unaffected', async () => {
    const opened = sessionsOpened.length;
    const [cut, slow] = await Promise.all([
      callTool(alice, 'hostile_endless', {}),
      callTool(alice, 'hostile_slow', { n: 3 }),
    ]);
    expect(errorOf(cut)).toMatchObject({ code: 'resultTooLarge' });
    expect(slow.content[0]!.text).toBe('slow 3');
    // Cut near the limit, not read on: what was written is at most the limit plus what the sockets held.
    expect(endlessWritten).toBeLessThan(8 * 1024 * 1024 + 16 * 1024 * 1024);
    expect((await callTool(alice, 'hostile_echo', { n: 4 })).content[0]!.text).toBe('echo 4');
    expect(ws.gateway.runtime('hostile')!.upstream.status()).toMatchObject({
      state: 'running',
      restarts: 0,
    });
    expect(sessionsOpened.length).toBe(opened);
    expect(endlessClosed).toBe(true);
  }, 60_000);

  it('under the limit, JSON and SSE answers pass unchanged', async () => {
    const discarded: number[] = [];
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { t: 'z'.repeat(50) } });
    const fake = async (_u: string | URL, init?: RequestInit) =>
      new Response(init?.headers ? `event: message\ndata: ${answer}\n\n` : answer, {
        headers: { 'content-type': init?.headers ? 'text/event-stream' : 'application/json' },
      });
    const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x' }) };
    const bounded = boundedFetch(200, (b) => void discarded.push(b), fake);
    expect(await (await bounded('http://x', post)).text()).toBe(answer);
    expect(await (await bounded('http://x', { ...post, headers: {} })).text()).toBe(
      `event: message\ndata: ${answer}\n\n`,
    );
    const small = boundedFetch(40, (b) => void discarded.push(b), fake);
    expect(JSON.parse(await (await small('http://x', post)).text())).toMatchObject({
      id: 1,
      error: { code: -32099, data: { airlock: 'resultTooLarge', limit: 40 } },
    });
    expect(discarded.length).toBe(1);
  });

  it('a JSON answer whose content-length is within the limit is handed on as fetched; a compressed or longer one is still counted', async () => {
    const discarded: number[] = [];
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { t: 'z'.repeat(50) } });
    const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x' }) };
    const fetched: Response[] = [];
    const fake = (headers: Record<string, string>, body: string = answer) =>
      boundedFetch(
        200,
        (b) => void discarded.push(b),
        async () => {
          const r = new Response(body, {
            headers: { 'content-type': 'application/json', ...headers },
          });
          fetched.push(r);
          return r;
        },
      );
    // Said length within the limit: the very response fetch gave (no re-wrapping stream).
    const said = await fake({ 'content-length': String(Buffer.byteLength(answer)) })(
      'http://x',
      post,
    );
    expect(said).toBe(fetched.at(-1));
    expect(await said.text()).toBe(answer);
    // No length said: counted (a new response), passed whole under the limit.
    const unsaid = await fake({})('http://x', post);
    expect(unsaid).not.toBe(fetched.at(-1));
    expect(await unsaid.text()).toBe(answer);
    // Said length over the limit: counted, cut.
    const long = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { t: 'z'.repeat(500) } });
    const over = await fake({ 'content-length': String(long.length) }, long)('http://x', post);
    expect(JSON.parse(await over.text())).toMatchObject({
      error: { data: { airlock: 'resultTooLarge' } },
    });
    // A compressed body's length is not its size once decoded: counted as it streams, never trusted.
    const gzipped = await fake({ 'content-length': '20', 'content-encoding': 'gzip' }, long)(
      'http://x',
      post,
    );
    expect(gzipped).not.toBe(fetched.at(-1));
    expect(JSON.parse(await gzipped.text())).toMatchObject({
      error: { data: { airlock: 'resultTooLarge' } },
    });
    expect(discarded.length).toBe(2);
  });

  it('calls on one keep-alive session leave no abort listener on the transport’s signal, and its abort still reaches a request in flight', async () => {
    const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} });
    const seen: AbortSignal[] = [];
    const fake = async (_u: string | URL, init?: RequestInit) => {
      seen.push(init!.signal!);
      return new Response(`event: message\ndata: ${answer}\n\n`, {
        headers: { 'content-type': 'text/event-stream' },
      });
    };
    const session = new AbortController();
    const bounded = boundedFetch(1_000, () => undefined, fake);
    const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x' }) };
    for (let i = 0; i < 50; i++)
      await (await bounded('http://x', { ...post, signal: session.signal })).text();
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(0);
    // Each request had a signal of its own, tied to the session's while it ran.
    expect(new Set(seen).size).toBe(50);
    const open = await bounded('http://x', { ...post, signal: session.signal });
    session.abort(new Error('transport closed'));
    expect(seen.at(-1)!.aborted).toBe(true);
    await open.body?.cancel();
  });
});
