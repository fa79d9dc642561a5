/**
 * The `sessions` part's server process (bench/sessions.mjs forks it with
 * --expose-gc): the workspace `airlock serve` runs (default doors scene,
 * notes, page; SQLite in a temp folder) behind its HTTP app, and a bare SDK
 * v2 low-level `Server` with one echo tool, one per 2025-era session over
 * `WebStandardStreamableHTTPServerTransport` + `toNodeHandler`, the wiring
 * Airlock uses. Answers `{heap}` (bytes in use after full collections) when
 * the parent asks.
 */
import { createServer } from 'node:http';
import { setImmediate } from 'node:timers';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Server, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { silentLogger } from '../dist/kernel/logger.js';
import { openWorkspace } from '../dist/cli/workspace/workspace.js';
import { DEFAULT_DOORS } from '../dist/cli/workspace/doors.js';
import { createHttpApp } from '../dist/transport/http/http-app.js';

const AGENTS = 40;

const ECHO_INPUT = z.object({ text: z.string().max(1000) }).strict();
const ECHO_TOOL = {
  name: 'ledger_echo',
  description: 'Echo the text back.',
  inputSchema: z.toJSONSchema(ECHO_INPUT),
  annotations: { readOnlyHint: true },
};

function bareServer() {
  const server = new Server(
    { name: 'bare', version: '0.0.0' },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler('tools/list', async () => ({ tools: [ECHO_TOOL] }));
  server.setRequestHandler('tools/call', async (request) => {
    const { text } = ECHO_INPUT.parse(request.params.arguments ?? {});
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

/** 2025-era sessions only: a map of per-session Node handlers, as Airlock keeps them. */
async function bareHttp() {
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    const sid = req.headers['mcp-session-id'];
    if (sid) return sessions.get(sid)?.handle(req, res, body);
    const server = bareServer();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, { server, transport, handle }),
      onsessionclosed: (id) => sessions.delete(id),
    });
    const handle = toNodeHandler({ fetch: (r, o) => transport.handleRequest(r, o) });
    await server.connect(transport);
    await handle(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    async close() {
      for (const s of sessions.values()) await s.transport.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

async function airlockHttp() {
  const data = mkdtempSync(join(tmpdir(), 'airlock-bench-sessions-'));
  const workspace = await openWorkspace({
    data,
    doors: DEFAULT_DOORS,
    logger: silentLogger,
    relayPort: 0,
  });
  const app = createHttpApp({ kernel: workspace.kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  // An agent holds at most 64 sessions (authority.md §4): the sessions are spread over agents.
  const tokens = [];
  for (let i = 0; i < AGENTS; i++)
    tokens.push((await workspace.kernel.principals.addAgent(`bench-${i}`)).token);
  return {
    url: `http://127.0.0.1:${addr.port}/mcp`,
    tokens,
    async close() {
      await app.close();
      await workspace.close();
      rmSync(data, { recursive: true, force: true });
    },
  };
}

async function heap() {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const servers = { airlock: await airlockHttp(), 'sdk-server': await bareHttp() };
process.on('message', async (message) => {
  if (message === 'heap') process.send({ heap: await heap() });
  if (message === 'close') {
    for (const s of Object.values(servers)) await s.close();
    process.exit(0);
  }
});
process.send({
  urls: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.url])),
  tokens: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.tokens ?? [null]])),
});
