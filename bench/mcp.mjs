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
 * | bare proxy, stdio| —                                  | client ⇄ bare SDK proxy (stdio) ⇄ upstream (stdio)          |
 * | bare proxy, in process | —                            | client ⇄ bare SDK proxy in this process (in-memory) ⇄ upstream |
 * | bare proxy, http | —                                  | client ⇄ bare SDK proxy (HTTP) ⇄ upstream (HTTP)            |
 * | filesystem       | client ⇄ server-filesystem (stdio) | client ⇄ `airlock mcp` (stdio) ⇄ server-filesystem          |
 * | kernel.call only | —                                  | `kernel.call` of the door's tool, the upstream answered in process (no MCP, no hop), read audited / not |
 *
 * The first two are what an agent sees (one more process hop plus the
 * kernel pipeline); the in-process rows isolate Airlock's own work from the
 * extra process hop. The bare proxy (bench/mcp-proxy.mjs: an SDK `Server`
 * forwarding to an SDK `Client`, no kernel) is the floor of any gateway with
 * that hop: Airlock over it is the kernel's own cost. The filesystem row
 * calls a realistic upstream (`read_text_file` of a small file, the npm
 * server pinned in devDependencies) beside the trivial echo. The
 * `kernel.call only` rows are the kernel pipeline alone, in µs per call.
 * Besides wall time, the CPU each proxy process (Airlock, bare proxy; stdio
 * and HTTP) spends per call while its own leg runs (/proc, 10 ms ticks:
 * robust under load, where wall time is not), their RSS, and the RSS of
 * `airlock mcp` over a 10,000-tool upstream (issue 28) against a one-tool
 * one. Target (issue 28): through Airlock ≤ ×1.15 the bare proxy.
 * Run with `BENCH_PARTS=mcp npm run bench` (part of bench/run.mjs). Env:
 * BENCH_MCP_CALLS (1000 sequential calls per leg); BENCH_MCP_BASE, another
 * checkout with its own dist/ (e.g. a worktree of main, built): its
 * `airlock mcp` is measured in the same rounds (stdio and HTTP, `… (base)`
 * rows and CPU), a before/after in one run.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
import { createEventBus } from '../dist/kernel/events/events.js';
import { silentLogger } from '../dist/kernel/logger.js';
import { openStore } from '../dist/store/open.js';
import { createMcpServer } from '../dist/transport/mcp/mcp-server.js';
import { createMcpDoorsFrom, parseUpstreams } from '../dist/doors/mcp/index.js';
import { upstreamTool } from '../dist/doors/mcp/tools.js';
import { DEFAULT_LIMITS } from '../dist/kernel/tool.js';
import { createBareProxy } from './mcp-proxy.mjs';

const int = (name, fallback) => {
  const n = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
export const MCP_CALLS = int('BENCH_MCP_CALLS', 1000);
const UPSTREAM = fileURLToPath(new URL('./mcp-upstream.mjs', import.meta.url));
const PROXY = fileURLToPath(new URL('./mcp-proxy.mjs', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/airlock.js', import.meta.url));
const BASE_BIN = process.env.BENCH_MCP_BASE
  ? join(process.env.BENCH_MCP_BASE, 'bin/airlock.js')
  : null;
const MANY = fileURLToPath(new URL('../test/fixtures/mcp/many-upstream.mjs', import.meta.url));
const FILESYSTEM = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-filesystem/dist/index.js',
);
const FILE_TEXT = 'A small file, as an agent reads one.\n'.repeat(8);
const TOKEN = 'ak_bench-mcp-token-0123456789abcdef';

const client = () => new Client({ name: 'bench', version: '1' });
const echo = (c) => async () => {
  const r = await c.callTool({ name: c.tool, arguments: { text: 'hello' } });
  if (r.isError || r.content?.[0]?.text !== 'hello')
    throw new Error(`echo failed: ${JSON.stringify(r).slice(0, 300)}`);
};
const readFile = (c, path) => async () => {
  const r = await c.callTool({ name: c.tool, arguments: { path } });
  if (r.isError || r.content?.[0]?.text !== FILE_TEXT)
    throw new Error(`read_text_file failed: ${JSON.stringify(r).slice(0, 300)}`);
};
const stdio = (args, env) =>
  new StdioClientTransport({
    command: process.execPath,
    args,
    ...(env ? { env: { ...process.env, ...env } } : {}),
    stderr: 'ignore',
  });

/** CPU time (user + system) a process has used so far, in µs (Linux /proc; clock ticks of 10 ms). */
function cpuUsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return null;
  }
}

/** Resident set size of a process, in MiB (Linux /proc). */
function rssMibOf(pid) {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

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

/**
 * The kernel alone: the mcp door's `echo` tool over an upstream whose client
 * answers in this process, called through `kernel.call` (validate, policy,
 * limits, execute, audit, events; no MCP framing, no process hop).
 */
async function kernelOnly(dir) {
  const { store, blobs } = await openStore({ data: dir });
  const events = await createEventBus();
  const kernel = createKernel({ store, blobs, events, logger: silentLogger });
  const answer = { content: [{ type: 'text', text: 'hello' }] };
  const upstream = {
    name: 'up',
    client: async () => ({ callTool: async () => answer, getServerCapabilities: () => ({}) }),
  };
  const tool = (name, auditReads) =>
    upstreamTool({
      upstream,
      tool: {
        name: 'echo',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string' } },
          required: ['text'],
        },
        annotations: { readOnlyHint: true },
      },
      name,
      effect: 'read',
      limits: DEFAULT_LIMITS,
      scrub: (text) => text,
      auditReads,
    });
  kernel.mount({ name: 'up', tools: [tool('up_echo', true), tool('up_echo_unaudited', false)] });
  await kernel.start();
  const connection = {
    id: 'agent:stdio:bench/process:0f5a9c7e-0000-4000-8000-000000000000',
    kind: 'stdio',
    agent: 'stdio:bench',
    session: '0f5a9c7e-0000-4000-8000-000000000000',
  };
  const call = (name) => async () => {
    const r = await kernel.call('up', name, { text: 'hello' }, { connection });
    if (!r.ok) throw new Error(`kernel.call failed: ${JSON.stringify(r).slice(0, 300)}`);
  };
  return {
    audited: call('up_echo'),
    unaudited: call('up_echo_unaudited'),
    async close() {
      await kernel.close();
      await events.close();
      await store.close();
    },
  };
}

/** The bare SDK proxy (no kernel) in this process over a stdio upstream, served in memory. */
async function inProcessBareProxy() {
  const proxy = await createBareProxy(stdio([UPSTREAM, 'stdio']));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await proxy.server().connect(b);
  const c = await connected(a, 'up_echo');
  return {
    client: c,
    async close() {
      await c.close();
      await proxy.close();
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
    const baseStdio = BASE_BIN
      ? await connected(
          stdio(
            [
              BASE_BIN,
              'mcp',
              `up=${process.execPath} ${UPSTREAM} stdio`,
              '--data',
              join(dir, 'base-stdio'),
            ],
            {
              AIRLOCK_LOG_LEVEL: 'warn',
            },
          ),
          'up_echo',
        )
      : null;
    if (baseStdio) closers.push(() => baseStdio.close());
    const inProcess = await inProcessAirlock(join(dir, 'inproc'));
    closers.push(() => inProcess.close());
    const inProcessNoReadAudit = await inProcessAirlock(join(dir, 'inproc-noaudit'), {
      auditReads: false,
    });
    closers.push(() => inProcessNoReadAudit.close());
    // the floor: a bare SDK proxy (no kernel), over stdio and in process
    const proxyStdio = await connected(
      stdio([PROXY, process.execPath, UPSTREAM, 'stdio']),
      'up_echo',
    );
    closers.push(() => proxyStdio.close());
    const proxyInProcess = await inProcessBareProxy();
    closers.push(() => proxyInProcess.close());

    const kernelAlone = await kernelOnly(join(dir, 'kernel'));
    closers.push(() => kernelAlone.close());

    // a realistic upstream: server-filesystem's read_text_file of a small file
    const files = join(dir, 'files');
    mkdirSync(files);
    const file = join(files, 'note.txt');
    writeFileSync(file, FILE_TEXT);
    const directFs = await connected(stdio([FILESYSTEM, files]), 'read_text_file');
    closers.push(() => directFs.close());
    const airlockFs = await connected(
      stdio(
        [BIN, 'mcp', `fs=${process.execPath} ${FILESYSTEM} ${files}`, '--data', join(dir, 'fs')],
        { AIRLOCK_LOG_LEVEL: 'warn' },
      ),
      'fs_read_text_file',
    );
    closers.push(() => airlockFs.close());

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
    const proxyHttpChild = await started([PROXY, '--http', upstreamUrl], /listening (\S+)/);
    closers.push(() => proxyHttpChild.child.kill('SIGTERM'));
    const proxyHttp = await connected(
      new StreamableHTTPClientTransport(new URL(proxyHttpChild.match[1])),
      'up_echo',
    );
    closers.push(() => proxyHttp.close());
    const airlockHttp = await connected(
      new StreamableHTTPClientTransport(new URL(airlock.match[1]), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
      'up_echo',
    );
    closers.push(() => airlockHttp.close());
    const baseAirlock = BASE_BIN
      ? await started(
          [
            BASE_BIN,
            'mcp',
            `up=${upstreamUrl}`,
            '--port',
            '0',
            '--token',
            TOKEN,
            '--data',
            join(dir, 'base-http'),
          ],
          /MCP \(all doors\)\s+(http:\/\/\S+\/mcp)/,
        )
      : null;
    if (baseAirlock) closers.push(() => baseAirlock.child.kill('SIGTERM'));
    const baseHttp = baseAirlock
      ? await connected(
          new StreamableHTTPClientTransport(new URL(baseAirlock.match[1]), {
            requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
          }),
          'up_echo',
        )
      : null;
    if (baseHttp) closers.push(() => baseHttp.close());

    const legs = [
      { key: 'stdio direct', run: sequential(echo(directStdio)) },
      { key: 'stdio through airlock', run: sequential(echo(airlockStdio)) },
      { key: 'stdio through airlock in process', run: sequential(echo(inProcess.client)) },
      {
        key: 'same, auditReads: false',
        run: sequential(echo(inProcessNoReadAudit.client)),
      },
      { key: 'stdio through bare SDK proxy', run: sequential(echo(proxyStdio)) },
      { key: 'bare SDK proxy in process', run: sequential(echo(proxyInProcess.client)) },
      { key: 'http direct', run: sequential(echo(directHttp)) },
      { key: 'http through airlock', run: sequential(echo(airlockHttp)) },
      { key: 'http through bare SDK proxy', run: sequential(echo(proxyHttp)) },
      { key: 'filesystem read direct', run: sequential(readFile(directFs, file)) },
      { key: 'filesystem read through airlock', run: sequential(readFile(airlockFs, file)) },
      { key: 'kernel.call only, read audited', run: sequential(kernelAlone.audited) },
      { key: 'kernel.call only, read not audited', run: sequential(kernelAlone.unaudited) },
      ...(baseStdio && baseHttp
        ? [
            { key: 'stdio through airlock (base)', run: sequential(echo(baseStdio)) },
            { key: 'http through airlock (base)', run: sequential(echo(baseHttp)) },
          ]
        : []),
    ];
    // Warm up every path (JIT, first connections) before measuring.
    for (const leg of legs) await leg.run(50);
    // The proxy processes' own CPU per call (robust under load, unlike wall time), counted
    // only while their own leg runs: what they spend idle between slices is not the calls'.
    const processes = {
      'stdio: airlock process': ['stdio through airlock', airlockStdio.transport?.pid],
      'stdio: bare SDK proxy process': ['stdio through bare SDK proxy', proxyStdio.transport?.pid],
      'http: airlock process': ['http through airlock', airlock.child.pid],
      'http: bare SDK proxy process': ['http through bare SDK proxy', proxyHttpChild.child.pid],
      ...(baseStdio && baseAirlock
        ? {
            'stdio: airlock (base) process': [
              'stdio through airlock (base)',
              baseStdio.transport?.pid,
            ],
            'http: airlock (base) process': ['http through airlock (base)', baseAirlock.child.pid],
          }
        : {}),
    };
    const spent = new Map();
    for (const [name, [key, pid]] of Object.entries(processes)) {
      const leg = legs.find((l) => l.key === key);
      const run = leg.run;
      spent.set(name, 0);
      leg.run = async (n) => {
        const before = cpuUsOf(pid);
        const out = await run(n);
        spent.set(name, spent.get(name) + (cpuUsOf(pid) - before));
        return out;
      };
    }
    const samples = await interleave(legs, MCP_CALLS);
    const cpu = Object.fromEntries(
      Object.entries(processes).map(([name, [, pid]]) => [
        name,
        { cpuUsPerCall: Math.round(spent.get(name) / MCP_CALLS), rssMib: rssMibOf(pid) },
      ]),
    );
    const many = await manyToolsRss(dir);
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
    const perCall = (a, b) =>
      cpu[a].cpuUsPerCall && cpu[b].cpuUsPerCall
        ? ratio(cpu[a].cpuUsPerCall, cpu[b].cpuUsPerCall)
        : null;
    return {
      calls: MCP_CALLS,
      rows,
      cpu,
      cpuRatios: {
        'stdio: airlock / bare SDK proxy, CPU per call': perCall(
          'stdio: airlock process',
          'stdio: bare SDK proxy process',
        ),
        'http: airlock / bare SDK proxy, CPU per call': perCall(
          'http: airlock process',
          'http: bare SDK proxy process',
        ),
        ...(baseStdio
          ? {
              'stdio: airlock (base) / bare SDK proxy, CPU per call': perCall(
                'stdio: airlock (base) process',
                'stdio: bare SDK proxy process',
              ),
              'http: airlock (base) / bare SDK proxy, CPU per call': perCall(
                'http: airlock (base) process',
                'http: bare SDK proxy process',
              ),
            }
          : {}),
      },
      many,
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
        'stdio: bare SDK proxy / direct (the extra hop, no kernel)': pair(
          'stdio through bare SDK proxy',
          'stdio direct',
        ),
        'stdio: through airlock / bare SDK proxy (the kernel)': pair(
          'stdio through airlock',
          'stdio through bare SDK proxy',
        ),
        'in process: airlock / bare SDK proxy (the kernel)': pair(
          'stdio through airlock in process',
          'bare SDK proxy in process',
        ),
        'http: through airlock / direct': pair('http through airlock', 'http direct'),
        'http: bare SDK proxy / direct (the extra hop, no kernel)': pair(
          'http through bare SDK proxy',
          'http direct',
        ),
        'http: through airlock / bare SDK proxy (the kernel)': pair(
          'http through airlock',
          'http through bare SDK proxy',
        ),
        ...(baseStdio
          ? {
              'stdio: through airlock (base) / bare SDK proxy': pair(
                'stdio through airlock (base)',
                'stdio through bare SDK proxy',
              ),
              'http: through airlock (base) / bare SDK proxy': pair(
                'http through airlock (base)',
                'http through bare SDK proxy',
              ),
            }
          : {}),
        'filesystem read_text_file: through airlock / direct': pair(
          'filesystem read through airlock',
          'filesystem read direct',
        ),
      },
    };
  } finally {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * RSS of `airlock mcp` over an upstream of 10,000 tools (the compact
 * search/call pair on `/mcp`), after listing its tools and one search,
 * against the same over the one-tool echo upstream.
 */
async function manyToolsRss(dir) {
  const measure = async (spec, data, search) => {
    const c = await connected(
      stdio([BIN, 'mcp', spec, '--data', join(dir, data)], { AIRLOCK_LOG_LEVEL: 'warn' }),
      search,
    );
    try {
      let listed = 0;
      let cursor;
      do {
        const page = await c.listTools(cursor ? { cursor } : undefined);
        listed += page.tools.length;
        cursor = page.nextCursor;
      } while (cursor);
      if (search) await c.callTool({ name: search, arguments: { query: 'code word w9999' } });
      return { tools: listed, rssMib: rssMibOf(c.transport.pid) };
    } finally {
      await c.close();
    }
  };
  const one = await measure(`up=${process.execPath} ${UPSTREAM} stdio`, 'rss-one', null);
  const many = await measure(`many=${process.execPath} ${MANY}`, 'rss-many', 'many_search_tools');
  return { oneTool: one, tenThousandTools: many };
}

export function printMcp(results, table) {
  console.log(
    `mcp door: tools/call of one upstream echo (SDK v2 McpServer) through Airlock vs directly, same rounds; ${results.calls} sequential calls per row\n`,
  );
  console.log(
    table(
      ['path', 'median µs', 'p95 µs', 'mean µs', 'calls/s'],
      results.rows.map((r) => [
        r.path,
        r.medianUs,
        r.p95Us,
        Math.round(1e6 / r.perSecond),
        r.perSecond,
      ]),
    ),
  );
  for (const [pair, r] of Object.entries(results.ratios))
    console.log(`${pair}: median ×${r.median}, p95 ×${r.p95}, calls/s ×${r.callsPerSecond}`);
  for (const [k, v] of Object.entries(results.cpu ?? {}))
    console.log(`${k}: ${v.cpuUsPerCall ?? '?'} µs CPU per call, RSS ${v.rssMib ?? '?'} MiB`);
  for (const [k, v] of Object.entries(results.cpuRatios ?? {})) console.log(`${k}: ×${v}`);
  if (results.many)
    console.log(
      `RSS of airlock mcp: one-tool upstream ${results.many.oneTool.rssMib} MiB; 10,000-tool upstream ${results.many.tenThousandTools.rssMib} MiB (after listing /mcp and one search)`,
    );
  console.log('(target: through airlock ≤ ×1.15 the bare SDK proxy, stdio and http)\n');
}
