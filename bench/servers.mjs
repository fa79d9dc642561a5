/**
 * The servers the benchmark measures: an Airlock kernel (ledger door) on a
 * temp SQLite folder or a PostgreSQL URL, its HTTP app, and two bare SDK v2
 * baselines with one echo tool, wired the way Airlock serves MCP.
 *
 * Run directly (as bench/run.mjs forks it), it serves the three echo
 * endpoints in this process and sends their URLs to the parent over IPC.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { McpServer, Server, createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import {
  NodeStreamableHTTPServerTransport,
  toNodeHandler,
  toWebRequest,
} from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { fetch as undiciFetch } from 'undici';
import { createKernel } from '../dist/kernel/kernel.js';
import { createEventBus } from '../dist/kernel/events.js';
import { silentLogger } from '../dist/kernel/logger.js';
import { openStore } from '../dist/store/open.js';
import { createHttpApp } from '../dist/transport/http-app.js';
import { createLedgerDoor } from '../dist/doors/testing/ledger.js';

export const ERAS = { legacy: {}, modern: { versionNegotiation: { mode: { pin: '2026-07-28' } } } };

export async function airlockKernel(
  store,
  { doors = [createLedgerDoor()], kernelOptions = {} } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
  const opened = await openStore({ data: dir, ...(store ? { store } : {}) });
  const events = await createEventBus();
  const kernel = createKernel({
    store: opened.store,
    blobs: opened.blobs,
    events,
    logger: silentLogger,
    ...kernelOptions,
  });
  for (const door of doors) kernel.mount(door);
  await kernel.start();
  return {
    kernel,
    dir,
    store: opened.store,
    async close() {
      await kernel.close();
      await events.close();
      await opened.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}/mcp`;
}

/** The agent the bench's clients act as: Airlock's MCP needs an agent token (authority.md §1). */
export const BENCH_AGENT = 'bench';

export async function airlockHttp(kernel) {
  const app = createHttpApp({ kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  const agent = await kernel.principals.addAgent(BENCH_AGENT);
  return {
    url: `http://127.0.0.1:${addr.port}/mcp`,
    token: agent.token,
    close: () => app.close(),
  };
}

const ECHO_INPUT = z.object({ text: z.string().max(1000) }).strict();
const echoResult = (text) => ({
  content: [{ type: 'text', text: JSON.stringify({ text }) }],
  structuredContent: { text },
});

/** Baseline servers: one echo tool, no kernel, guards or router. `sdk-mcpserver` is the SDK's high-level API (it validates input and output). */
function mcpServerFactory() {
  const server = new McpServer({ name: 'bare', version: '0.0.0' });
  server.registerTool(
    'ledger_echo',
    {
      description: 'Echo the text back.',
      inputSchema: ECHO_INPUT,
      outputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => echoResult(text),
  );
  return server;
}

/** `sdk-server`: the low-level Server Airlock itself builds on, with a precomputed tool list and the same zod check. */
const ECHO_TOOL = {
  name: 'ledger_echo',
  description: 'Echo the text back.',
  inputSchema: z.toJSONSchema(ECHO_INPUT),
  annotations: { readOnlyHint: true },
};
function lowLevelFactory() {
  const server = new Server(
    { name: 'bare', version: '0.0.0' },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: [ECHO_TOOL] }));
  server.setRequestHandler('tools/call', async (request) => {
    const parsed = ECHO_INPUT.safeParse(request.params.arguments ?? {});
    if (!parsed.success)
      return { content: [{ type: 'text', text: parsed.error.message }], isError: true };
    return echoResult(parsed.data.text);
  });
  return server;
}

/** Serves `factory` the way Airlock serves: sessionful transport for the 2025 era, createMcpHandler for 2026-07-28. */
async function bareHttp(factory) {
  const modern = toNodeHandler(createMcpHandler(factory, { legacy: 'reject' }));
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body =
        req.method === 'POST' ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const sid = req.headers['mcp-session-id'];
      if (sid) return await sessions.get(sid).handleRequest(req, res, body);
      if (!(await isLegacyRequest(await toWebRequest(req, body), body)))
        return await modern(req, res, body);
      const server = factory();
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
        onsessionclosed: (id) => sessions.delete(id),
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    }
  });
  const url = await listen(http);
  return {
    url,
    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/**
 * An SDK v2 client of `era` on `url`. With `dispatcher` (an undici Agent, e.g.
 * one bound to its own source address) its requests go through that pool
 * instead of the process's shared one.
 */
export async function connect(url, era, token, { dispatcher } = {}) {
  const client = new Client({ name: 'airlock-bench', version: '1.0.0' }, ERAS[era]);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
      ...(dispatcher
        ? { fetch: (input, init) => undiciFetch(input, { ...init, dispatcher }) }
        : {}),
    }),
  );
  return client;
}

/** In the child: serve the three echo endpoints until the parent says close. */
async function serveEcho() {
  const airlock = await airlockKernel();
  const servers = {
    airlock: await airlockHttp(airlock.kernel),
    'sdk-server': await bareHttp(lowLevelFactory),
    'sdk-mcpserver': await bareHttp(mcpServerFactory),
  };
  process.send({
    urls: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.url])),
    tokens: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.token])),
  });
  // 'cpu' asks for this process's CPU time (µs, user+system) so the parent can
  // charge each leg's server CPU to it; anything else means close.
  const onMessage = async (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      return process.send({ cpuUs: user + system });
    }
    process.off('message', onMessage);
    for (const server of Object.values(servers)) await server.close();
    await airlock.close();
    process.exit(0);
  };
  process.on('message', onMessage);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await serveEcho();
