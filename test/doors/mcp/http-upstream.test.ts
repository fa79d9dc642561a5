/**
 * An upstream over streamable HTTP: an SDK server on loopback that demands a
 * header, reached through `--upstream-header`-style config with `${ENV}`;
 * its tool list changes reach Airlock's clients as list_changed, and a
 * caller's cancellation reaches the upstream's handler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { callTool, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { MODERN_PROTOCOL } from '../../helpers/mcp-client.js';

const TOKEN = 'upstream-bearer-7f3a9c';
let http: HttpServer;
let modernHttp: HttpServer;
let ws: GatewayWorkspace;
let upstreamUrl: string;
const servers: McpServer[] = [];
const seenAuth: string[] = [];
let cancelled = 0;
/** Calls of the upstream `wait` tool that have started waiting. */
let waiting = 0;

function upstreamServer(): McpServer {
  const server = new McpServer(
    { name: 'loopback', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.registerTool(
    'whoami',
    {
      description: 'Says hello',
      inputSchema: z.object({ name: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ name }) => ({ content: [{ type: 'text', text: `hello ${name}` }] }),
  );
  server.registerTool(
    'wait',
    {
      description: 'Waits until cancelled',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    async (_args, ctx) =>
      new Promise((resolve) => {
        waiting++;
        ctx.mcpReq.signal.addEventListener('abort', () => {
          cancelled++;
          resolve({ content: [{ type: 'text', text: 'stopped' }] });
        });
      }),
  );
  server.registerTool(
    'steps',
    {
      description: 'Reports progress in four steps',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true },
    },
    async (_args, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= 4; step++) {
        if (token !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: 4 },
          });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { content: [{ type: 'text', text: 'four steps' }] };
    },
  );
  servers.push(server);
  return server;
}

beforeAll(async () => {
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  http = createServer((req, res) => {
    seenAuth.push(String(req.headers.authorization));
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      res.writeHead(401).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) {
      void existing.handleRequest(req, res);
      return;
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    void upstreamServer()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  // A 2026-07-28-only upstream (stateless, no 2025 handshake).
  const modern = toNodeHandler(
    createMcpHandler(
      () => {
        const s = new McpServer({ name: 'modern', version: '1.0.0' });
        s.registerTool(
          'era',
          {
            description: 'Says its era',
            inputSchema: z.object({}),
            annotations: { readOnlyHint: true },
          },
          async () => ({ content: [{ type: 'text', text: 'modern only' }] }),
        );
        return s;
      },
      { legacy: 'reject' },
    ),
  );
  modernHttp = createServer((req, res) => void modern(req, res));
  await new Promise<void>((resolve) => modernHttp.listen(0, '127.0.0.1', resolve));
  const modernUrl = `http://127.0.0.1:${(modernHttp.address() as AddressInfo).port}/mcp`;
  ws = await gatewayWorkspace(
    {
      web: {
        url: upstreamUrl,
        // Believed as announced: this file is about forwarding list changes, not pinning (pinning.test.ts).
        trust: 'annotations',
        headers: { Authorization: 'Bearer ${AIRLOCK_TEST_UPSTREAM_TOKEN}' },
      },
      next: { url: modernUrl },
    },
    { env: { ...process.env, AIRLOCK_TEST_UPSTREAM_TOKEN: TOKEN } },
  );
}, 30_000);

afterAll(async () => {
  await ws?.close();
  await Promise.all(servers.map((s) => s.close().catch(() => undefined)));
  http?.closeAllConnections();
  modernHttp?.closeAllConnections();
  await new Promise((resolve) => modernHttp?.close(resolve));
  await new Promise((resolve) => http?.close(resolve));
});

describe('streamable HTTP upstream', () => {
  it('reaches the upstream with the configured header, its ${ENV} value expanded', async () => {
    const alice = await ws.agent('alice');
    const r = await callTool(alice, 'web_whoami', { name: 'alice' });
    expect(r.content[0]!.text).toBe('hello alice');
    expect(seenAuth.every((a) => a === `Bearer ${TOKEN}`)).toBe(true);
    expect(ws.gateway.views()[0]).toMatchObject({
      name: 'web',
      transport: 'http',
      state: 'running',
    });
    // The header value is a secret: the owner's view shows only where the upstream is.
    expect(JSON.stringify(ws.gateway.views())).not.toContain(TOKEN);
  });

  it('reaches a 2026-era-only upstream too (the era is negotiated)', async () => {
    const alice = await ws.agent('era-client');
    const r = await callTool(alice, 'next_era');
    expect(r.content[0]!.text).toBe('modern only');
  });

  it('a tool the upstream adds reaches a connected client as tools/list_changed', async () => {
    let changed = 0;
    const added = await ws.tk.kernel.principals.addAgent('watcher');
    if ('ok' in added) throw new Error(added.message);
    const headers = { authorization: `Bearer ${added.token}` };
    const watcher = new Client(
      { name: 'watcher', version: '1' },
      { listChanged: { tools: { debounceMs: 0, onChanged: () => void changed++ } } },
    );
    await watcher.connect(
      new StreamableHTTPClientTransport(new URL(`${ws.base}/mcp`), { requestInit: { headers } }),
    );
    for (const s of servers)
      if (s.isConnected())
        s.registerTool(
          'added',
          {
            description: 'Added later',
            inputSchema: z.object({}),
            annotations: { readOnlyHint: true },
          },
          async () => ({ content: [{ type: 'text', text: 'new tool' }] }),
        );
    await waitFor(() => changed > 0, { timeoutMs: 5_000, message: 'tools/list_changed' });
    const { tools } = await watcher.listTools();
    expect(tools.map((t) => t.name)).toContain('web_added');
    expect((await callTool(watcher, 'web_added')).content[0]!.text).toBe('new tool');
    await watcher.close();
  });

  it('an HTTP upstream’s progress reaches a 2025-era and a 2026-era client', async () => {
    for (const client of [
      await ws.agent('progress-2025'),
      await ws.agent('progress-2026', { pin: MODERN_PROTOCOL }),
    ]) {
      const seen: number[] = [];
      const r = await client.callTool(
        { name: 'web_steps', arguments: {} },
        { onprogress: (p) => void seen.push(p.progress) },
      );
      expect(r.content).toEqual([{ type: 'text', text: 'four steps' }]);
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen).toEqual([1, 2, 3, 4].slice(0, seen.length));
    }
  });

  it('a caller’s cancellation reaches the upstream’s handler', async () => {
    const alice = await ws.agent('canceller');
    const controller = new AbortController();
    const call = alice.callTool({ name: 'web_wait', arguments: {} }, { signal: controller.signal });
    await waitFor(() => waiting === 1, {
      timeoutMs: 5_000,
      message: 'the upstream handler to start waiting',
    });
    controller.abort();
    await expect(call).rejects.toThrow();
    await waitFor(() => cancelled === 1, {
      timeoutMs: 5_000,
      message: 'the upstream to see the cancellation',
    });
  });
});
