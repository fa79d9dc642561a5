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
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
import { createEventBus } from '../dist/kernel/events/events.js';
import { silentLogger } from '../dist/kernel/logger.js';
import { openStore } from '../dist/store/open.js';
import { createHttpApp } from '../dist/transport/http/http-app.js';
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
  const base = dispatcher ? (input, init) => undiciFetch(input, { ...init, dispatcher }) : fetch;
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
      fetch: withoutTransportSignal(base),
    }),
  );
  return client;
}

/**
 * The SDK's client transport hands every request the one signal it aborts
 * when it closes. undici keeps an abort listener per request on it until
 * each Request is collected, counts them on every request and prints a
 * MaxListenersExceededWarning per request past 1,500: a client-side cost per
 * call that grows with the run (and thousands of lines of bench output),
 * on both sides of every ratio. The bench's POSTs all end before their
 * client closes, so they go without it; the 2025 era's listening GET keeps
 * it (closing the client ends that stream).
 */
function withoutTransportSignal(base) {
  return (input, init) =>
    init?.method === 'POST' ? base(input, { ...init, signal: undefined }) : base(input, init);
}

/**
 * An Airlock kernel + HTTP app built from another build's dist/ (a URL ending
 * in `/`): `airlock-before` in the calls part, the same code path as
 * `airlock` at that commit. Only the kernel, store, event bus, ledger door
 * and HTTP app are used, whose options have not changed shape.
 */
async function airlockFromDist(dist) {
  const load = (path) => import(new URL(path, dist).href);
  const [
    { createKernel: makeKernel },
    { createEventBus: makeBus },
    logger,
    storeOpen,
    http,
    ledger,
  ] = await Promise.all([
    load('kernel/kernel.js'),
    load('kernel/events/events.js'),
    load('kernel/logger.js'),
    load('store/open.js'),
    load('transport/http/http-app.js'),
    load('doors/testing/ledger.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-before-'));
  const opened = await storeOpen.openStore({ data: dir });
  const events = await makeBus();
  const kernel = makeKernel({
    store: opened.store,
    blobs: opened.blobs,
    events,
    logger: logger.silentLogger,
  });
  kernel.mount(ledger.createLedgerDoor());
  await kernel.start();
  const app = http.createHttpApp({ kernel, logger: logger.silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  const agent = await kernel.principals.addAgent(BENCH_AGENT);
  return {
    url: `http://127.0.0.1:${addr.port}/mcp`,
    token: agent.token,
    async close() {
      await app.close();
      await kernel.close();
      await events.close();
      await opened.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `airlock-otel`: Airlock with telemetry on as `serve` turns it on (metrics
 * and traces, every span exported over OTLP/HTTP) to a sink on loopback that
 * answers 200 and counts what it got. Its own process: the tracer registers
 * a global context manager, which must not touch the other legs.
 */
async function airlockWithTelemetry() {
  const [{ createMetrics }, { createTracing, bothObservers }] = await Promise.all([
    import('../dist/telemetry/metrics.js'),
    import('../dist/telemetry/tracing.js'),
  ]);
  let exported = 0;
  const sink = createServer((req, res) => {
    req.on('data', (c) => (exported += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${sink.address().port}`;
  const metrics = createMetrics({ otlpUrl: `${base}/v1/metrics`, exportIntervalMs: 1000 });
  const tracing = createTracing({ otlpUrl: `${base}/v1/traces` });
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-otel-'));
  const opened = await openStore({ data: dir });
  const store = tracing.traced(metrics.timed(opened.store));
  const events = await createEventBus();
  const kernel = createKernel({
    store,
    blobs: opened.blobs,
    events,
    logger: silentLogger,
    observer: bothObservers(metrics.observer, tracing.observer),
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  metrics.watch(kernel);
  const app = createHttpApp({
    kernel,
    logger: silentLogger,
    tracer: tracing.requests,
    metrics: () => metrics.prometheus(),
  });
  const addr = await app.listen(0, '127.0.0.1');
  const agent = await kernel.principals.addAgent(BENCH_AGENT);
  return {
    url: `http://127.0.0.1:${addr.port}/mcp`,
    token: agent.token,
    exportedBytes: () => exported,
    async close() {
      await app.close();
      await kernel.close();
      await tracing.shutdown();
      await metrics.shutdown();
      await events.close();
      await opened.store.close();
      sink.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The echo servers one child serves, by BENCH_ECHO_VARIANT: `main` (Airlock,
 * the two bare SDK servers and the first of them again, for an A/A ratio), `otel` (Airlock with telemetry on) or
 * `before` (Airlock from BENCH_BEFORE_DIST).
 */
async function echoServers(variant) {
  if (variant === 'otel') return { 'airlock-otel': await airlockWithTelemetry() };
  if (variant === 'before') {
    const dist = pathToFileURL(`${resolve(process.env.BENCH_BEFORE_DIST)}/`);
    return { 'airlock-before': await airlockFromDist(dist) };
  }
  const airlock = await airlockKernel();
  return {
    airlock: { ...(await airlockHttp(airlock.kernel)), closeKernel: () => airlock.close() },
    'sdk-server': await bareHttp(lowLevelFactory),
    'sdk-mcpserver': await bareHttp(mcpServerFactory),
    // The same bare server again: its ratio to `sdk-server` is this run's noise floor (A/A).
    'sdk-server-again': await bareHttp(lowLevelFactory),
  };
}

/**
 * The CPU profiler of this process, driven by the parent: 'profile-start'
 * starts it (100 µs samples), { mark: label } notes the monotonic time (µs,
 * the profile's own clock) so the parent can tell whose calls a sample
 * belongs to, { profileTo: file } stops it and writes the profile with the
 * marks. Null for any other message.
 */
const profiling = { session: null, marks: [] };
async function profileMessage(message) {
  if (message === 'profile-start') {
    const { Session } = await import('node:inspector/promises');
    profiling.session = new Session();
    profiling.session.connect();
    profiling.marks = [];
    await profiling.session.post('Profiler.enable');
    await profiling.session.post('Profiler.setSamplingInterval', { interval: 100 });
    await profiling.session.post('Profiler.start');
    return { profiling: true };
  }
  if (message?.mark) {
    profiling.marks.push({ label: message.mark, t: Number(process.hrtime.bigint() / 1000n) });
    return { marked: true };
  }
  if (message?.profileTo) {
    const { profile } = await profiling.session.post('Profiler.stop');
    profiling.session.disconnect();
    writeFileSync(message.profileTo, JSON.stringify({ ...profile, marks: profiling.marks }));
    return { written: message.profileTo };
  }
  return null;
}

/** In the child: serve the echo endpoints of its variant until the parent says close. */
async function serveEcho() {
  const servers = await echoServers(process.env.BENCH_ECHO_VARIANT ?? 'main');
  process.send({
    urls: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.url])),
    tokens: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, v.token])),
  });
  // 'cpu' asks for this process's CPU time (µs, user+system) so the parent can
  // charge each leg's server CPU to it; 'profile-start', { mark } and
  // { profileTo } drive a CPU profile of this process (bench/profile-calls.mjs);
  // anything else means close.
  const onMessage = async (message) => {
    const profiled = await profileMessage(message);
    if (profiled) return process.send(profiled);
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      return process.send({ cpuUs: user + system });
    }
    if (message === 'exported') {
      const otel = servers['airlock-otel'];
      return process.send({ exportedBytes: otel ? otel.exportedBytes() : 0 });
    }
    process.off('message', onMessage);
    for (const server of Object.values(servers)) {
      await server.close();
      await server.closeKernel?.();
    }
    process.exit(0);
  };
  process.on('message', onMessage);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await serveEcho();
