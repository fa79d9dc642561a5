/**
 * The mcp door's overhead (issue #14): `tools/call` of one upstream `echo`
 * through Airlock against the same call straight to the same upstream, in
 * the same rounds, for a stdio upstream and a streamable HTTP upstream.
 *
 * | row              | direct leg                         | through-Airlock leg                                         |
 * |------------------|------------------------------------|-------------------------------------------------------------|
 * | stdio            | client ⇄ upstream (stdio)          | client ⇄ `airlock mcp` (stdio) ⇄ upstream (stdio)           |
 * | http             | client ⇄ upstream (HTTP)           | client ⇄ `airlock mcp --port` (HTTP) ⇄ upstream (HTTP)      |
 * | stdio, in process| client ⇄ upstream (stdio)          | client ⇄ Airlock in this process (in-memory) ⇄ upstream     |
 * | same, auditReads false | as above                     | as above, reads not audited (no durable store write per call) |
 *
 * The first two are what an agent sees (one more process hop plus the
 * kernel pipeline); the third isolates Airlock's own work from the extra
 * process hop. Run with `BENCH_PARTS=mcp npm run bench` (part of
 * bench/run.mjs). Env: BENCH_MCP_CALLS (1000 sequential calls per leg).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  InMemoryTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createKernel } from '../dist/kernel/kernel.js';
import { createEventBus } from '../dist/kernel/events.js';
import { silentLogger } from '../dist/kernel/logger.js';
import { openStore } from '../dist/store/open.js';
import { createMcpServer } from '../dist/transport/mcp-server.js';
import { createMcpDoorsFrom, parseUpstreams } from '../dist/doors/mcp/index.js';

const int = (name, fallback) => {
  const n = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
export const MCP_CALLS = int('BENCH_MCP_CALLS', 1000);
const UPSTREAM = fileURLToPath(new URL('./mcp-upstream.mjs', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/airlock.js', import.meta.url));
const TOKEN = 'ak_bench-mcp-token-0123456789abcdef';

const client = () => new Client({ name: 'bench', version: '1' });
const echo = (c) => async () => {
  const r = await c.callTool({ name: c.tool, arguments: { text: 'hello' } });
  if (r.isError || r.content?.[0]?.text !== 'hello')
    throw new Error(`echo failed: ${JSON.stringify(r).slice(0, 300)}`);
};

/** Starts a child and resolves with the first match of `ready` in its stdout. */
function started(args, ready) {
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, AIRLOCK_LOG_LEVEL: 'warn' },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = ready.exec(out);
      if (m) resolve({ child, match: m });
    });
    child.stderr.resume();
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${out}`)));
  });
}

async function connected(transport, tool) {
  const c = client();
  await c.connect(transport);
  c.tool = tool;
  return c;
}

/** An Airlock kernel in this process with the mcp door over a stdio upstream, served in memory. */
async function inProcessAirlock(dir, options = {}) {
  const { store, blobs } = await openStore({ data: dir });
  const events = await createEventBus();
  const kernel = createKernel({ store, blobs, events, logger: silentLogger });
  const { doors } = createMcpDoorsFrom({
    upstreams: parseUpstreams({
      up: { command: process.execPath, args: [UPSTREAM, 'stdio'], ...options },
    }),
    env: process.env,
    logger: silentLogger,
  });
  for (const d of doors) kernel.mount(d);
  await kernel.start();
  const server = createMcpServer({
    kernel,
    mounts: ['up'],
    identify: () => ({ id: 'agent:bench/process:1', kind: 'stdio', agent: 'bench', session: '1' }),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const c = await connected(a, 'up_echo');
  return {
    client: c,
    async close() {
      await c.close();
      await kernel.close();
      await events.close();
      await store.close();
    },
  };
}

export async function benchMcp({ interleave, sequential, stats, ratio }) {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-mcp-'));
  const closers = [];
  try {
    // stdio: direct, and through `airlock mcp` over stdio
    const directStdio = await connected(
      new StdioClientTransport({
        command: process.execPath,
        args: [UPSTREAM, 'stdio'],
        stderr: 'ignore',
      }),
      'echo',
    );
    closers.push(() => directStdio.close());
    const airlockStdio = await connected(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          BIN,
          'mcp',
          `up=${process.execPath} ${UPSTREAM} stdio`,
          '--data',
          join(dir, 'stdio'),
        ],
        env: { ...process.env, AIRLOCK_LOG_LEVEL: 'warn' },
        stderr: 'ignore',
      }),
      'up_echo',
    );
    closers.push(() => airlockStdio.close());
    const inProcess = await inProcessAirlock(join(dir, 'inproc'));
    closers.push(() => inProcess.close());
    const inProcessNoReadAudit = await inProcessAirlock(join(dir, 'inproc-noaudit'), {
      auditReads: false,
    });
    closers.push(() => inProcessNoReadAudit.close());

    // http: one upstream process; direct, and through `airlock mcp --port`
    const up = await started([UPSTREAM, 'http'], /listening (\S+)/);
    closers.push(() => up.child.kill('SIGTERM'));
    const upstreamUrl = up.match[1];
    const airlock = await started(
      [
        BIN,
        'mcp',
        `up=${upstreamUrl}`,
        '--port',
        '0',
        '--token',
        TOKEN,
        '--data',
        join(dir, 'http'),
      ],
      /MCP \(all doors\)\s+(http:\/\/\S+\/mcp)/,
    );
    closers.push(() => airlock.child.kill('SIGTERM'));
    const directHttp = await connected(
      new StreamableHTTPClientTransport(new URL(upstreamUrl)),
      'echo',
    );
    closers.push(() => directHttp.close());
    const airlockHttp = await connected(
      new StreamableHTTPClientTransport(new URL(airlock.match[1]), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
      'up_echo',
    );
    closers.push(() => airlockHttp.close());

    const legs = [
      { key: 'stdio direct', run: sequential(echo(directStdio)) },
      { key: 'stdio through airlock', run: sequential(echo(airlockStdio)) },
      { key: 'stdio through airlock in process', run: sequential(echo(inProcess.client)) },
      {
        key: 'same, auditReads: false',
        run: sequential(echo(inProcessNoReadAudit.client)),
      },
      { key: 'http direct', run: sequential(echo(directHttp)) },
      { key: 'http through airlock', run: sequential(echo(airlockHttp)) },
    ];
    // Warm up every path (JIT, first connections) before measuring.
    for (const leg of legs) await leg.run(50);
    const samples = await interleave(legs, MCP_CALLS);
    const rows = legs.map((l) => {
      const s = samples.get(l.key);
      return { path: l.key, ...stats(s.ns, s.wallNs) };
    });
    const by = Object.fromEntries(rows.map((r) => [r.path, r]));
    const pair = (a, b) => ({
      median: ratio(by[a].medianUs, by[b].medianUs),
      p95: ratio(by[a].p95Us, by[b].p95Us),
      callsPerSecond: ratio(by[a].perSecond, by[b].perSecond),
    });
    return {
      calls: MCP_CALLS,
      rows,
      ratios: {
        'stdio: through airlock / direct': pair('stdio through airlock', 'stdio direct'),
        'stdio: airlock in process / direct': pair(
          'stdio through airlock in process',
          'stdio direct',
        ),
        'stdio: airlock in process, reads not audited / direct': pair(
          'same, auditReads: false',
          'stdio direct',
        ),
        'http: through airlock / direct': pair('http through airlock', 'http direct'),
      },
    };
  } finally {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

export function printMcp(results, table) {
  console.log(
    `mcp door: tools/call of one upstream echo (SDK v2 McpServer) through Airlock vs directly, same rounds; ${results.calls} sequential calls per row\n`,
  );
  console.log(
    table(
      ['path', 'median µs', 'p95 µs', 'calls/s'],
      results.rows.map((r) => [r.path, r.medianUs, r.p95Us, r.perSecond]),
    ),
  );
  for (const [pair, r] of Object.entries(results.ratios))
    console.log(`${pair}: median ×${r.median}, p95 ×${r.p95}, calls/s ×${r.callsPerSecond}`);
  console.log('(target: stdio through airlock ≤ 1.3× direct)\n');
}
