/**
 * HTTP upstreams reconnect: an SDK server on loopback that restarts (its
 * sessions forgotten) is reconnected and the call runs; one that is down
 * answers `unavailable` at once and is reconnected with backoff when it is
 * back; a write in flight when it dies answers `unavailable` with
 * `mutationUncertain`, its operationID stays uncertain (a retry says so and
 * never runs it again), and the owner sees the uncertain write on the
 * upstream's view until the owner resolves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import type { Client } from '@modelcontextprotocol/client';
import { callTool, errorOf, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';
import { waitFor } from '../../helpers/wait.js';

let port = 0;
let http: HttpServer | null = null;
let ws: GatewayWorkspace;
let alice: Client;
let sessionsOpened = 0;
let hangStarted = 0;
const notes: string[] = [];

function upstreamServer(): McpServer {
  const server = new McpServer({ name: 'flaky', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Echoes',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'note',
    {
      description: 'Keeps a note',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ text }) => {
      notes.push(text);
      return { content: [{ type: 'text', text: `noted ${text}` }] };
    },
  );
  server.registerTool(
    'hang',
    {
      description: 'Starts a change and never answers',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async () => {
      hangStarted++;
      return new Promise(() => undefined);
    },
  );
  return server;
}

/** Starts the upstream (again) on the same port, with no memory of earlier sessions. */
async function startUpstream() {
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  const server = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return void existing.handleRequest(req, res);
    if (typeof id === 'string') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32001, message: 'Session not found' },
        }),
      );
      return;
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        sessionsOpened++;
        sessions.set(sid, transport);
      },
    });
    void upstreamServer()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  http = server;
}

async function stopUpstream() {
  const server = http;
  http = null;
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
}

const status = () => ws.gateway.runtime('flaky')!.upstream.status();

beforeAll(async () => {
  await startUpstream();
  ws = await gatewayWorkspace(
    { flaky: { url: `http://127.0.0.1:${port}/mcp`, trust: 'annotations' } },
    { kernel: { limits: { flaky: { timeoutMs: 20_000 } } } },
  );
  alice = await ws.agent('alice');
}, 30_000);

afterAll(async () => {
  await ws?.close();
  await stopUpstream();
});

describe('HTTP upstream reconnect', () => {
  it('an upstream that restarted (its session lost) is reconnected, and the call runs', async () => {
    expect((await callTool(alice, 'flaky_echo', { text: 'one' })).content[0]!.text).toBe('one');
    const opened = sessionsOpened;
    await stopUpstream();
    await startUpstream();
    const r = await callTool(alice, 'flaky_echo', { text: 'two' });
    expect(r.isError, r.content[0]!.text).toBeFalsy();
    expect(r.content[0]!.text).toBe('two');
    expect(sessionsOpened).toBe(opened + 1);
    expect(status()).toMatchObject({ state: 'running', restarts: 1 });
  }, 30_000);

  it('an upstream that is down answers unavailable at once, and is reconnected with backoff when back', async () => {
    await stopUpstream();
    const down = await callTool(alice, 'flaky_echo', { text: 'three' });
    expect(errorOf(down)).toMatchObject({ code: 'unavailable' });
    expect(errorOf(down).message).toMatch(/retry in a few seconds/i);
    expect(errorOf(down).mutationUncertain).toBeUndefined();
    await waitFor(() => status().state === 'restarting', { timeoutMs: 5_000 });
    expect(status().lastError).toBeTruthy();
    await startUpstream();
    await waitFor(() => status().state === 'running', { timeoutMs: 15_000 });
    expect((await callTool(alice, 'flaky_echo', { text: 'four' })).content[0]!.text).toBe('four');
  }, 30_000);

  it('a write in flight when the upstream dies is mutationUncertain; a retry never runs it again; the owner sees it', async () => {
    const started = hangStarted;
    const call = callTool(alice, 'flaky_hang', { text: 'x', operationID: 'op-hang-1' });
    await waitFor(() => hangStarted === started + 1, { timeoutMs: 10_000 });
    await stopUpstream();
    const r = await call;
    expect(errorOf(r)).toMatchObject({ code: 'unavailable', mutationUncertain: true });
    await startUpstream();
    await waitFor(() => status().state === 'running', { timeoutMs: 15_000 });
    const retry = await callTool(alice, 'flaky_hang', { text: 'x', operationID: 'op-hang-1' });
    expect(errorOf(retry)).toMatchObject({ code: 'mutationUncertain' });
    expect(hangStarted).toBe(started + 1);
    const view = await ws.rest('GET', 'upstreams');
    const flaky = view.body.upstreams.find((u: { name: string }) => u.name === 'flaky');
    expect(flaky.uncertainWrites).toEqual([
      expect.objectContaining({
        tool: 'flaky_hang',
        upstreamTool: 'hang',
        operationId: 'op-hang-1',
      }),
    ]);
    // A write that ran is not among them.
    await callTool(alice, 'flaky_note', { text: 'kept', operationID: 'op-note-1' });
    const again = (await ws.rest('GET', 'upstreams')).body.upstreams.find(
      (u: { name: string }) => u.name === 'flaky',
    );
    expect(again.uncertainWrites).toHaveLength(1);
  }, 40_000);
});
