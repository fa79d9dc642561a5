/**
 * Airlock benchmark: one script (the servers it measures are in
 * servers.mjs), every number a ratio against a baseline measured in the same
 * run, on the same machine, interleaved in rounds so machine noise hits both
 * sides alike.
 *
 * 1. `tools/call` round trips over loopback HTTP with the SDK v2 client, both
 *    protocol eras: the full Airlock stack (http app + kernel pipeline +
 *    ledger door, `ledger_echo`) against two bare SDK v2 servers with one echo
 *    tool (the low-level `Server` Airlock builds on, and `McpServer`), wired
 *    the way Airlock serves (sessionful NodeStreamableHTTPServerTransport for
 *    the 2025 era, `createMcpHandler` + `toNodeHandler` for 2026-07-28). The
 *    low-level bare server runs twice (`sdk-server-again`): their ratio is
 *    the run's noise floor, printed beside the issue 31 targets.
 * 3. Scene door (bench/scene.mjs): ops/s (single and 100-op batches) and
 *    undo/redo/s with the fsynced op log against the same history in memory,
 *    and `scene.json` time and size for a 200-page scene.
 * 2. Journaled idempotent writes (`ledger_append`, fresh operationIDs) and
 *    replays (same operationID again), in process through `kernel.call`
 *    (sequential and 8 in flight) and over HTTP, on SQLite against PostgreSQL.
 *
 * 4. Page door (bench/page.mjs): MCP client → relay → page → back for
 *    `wu_status`, against a bare WebSocket echo in the same rounds.
 * 5. Owner policy (bench/policy.mjs): the policy decision's share of the
 *    trivial round trip, and 21 rules against none.
 * 6. Scene engines (bench/engines.mjs, opt-in part `engines`): detection,
 *    OCR, inpainting and rendering quality on generated manga-like pages,
 *    today's engines against the new ones; `engines-real` (bench/engines-real.mjs):
 *    the engines on the real pages of test/fixtures/real-pages against their hand-made truth.
 * 7. The mcp door (bench/mcp.mjs, part `mcp`): `tools/call` through Airlock
 *    vs directly to the same upstream, stdio and HTTP, with a bare SDK proxy
 *    (bench/mcp-proxy.mjs) as the floor of the extra hop and the kernel alone.
 * 8. `writes` (bench/writes.mjs): journaled writes/s at 1 and 8 in flight
 *    against the same store's raw batched insert rate; the older SQLite vs
 *    PostgreSQL comparison (part 2 above) is the `journal` part.
 * 10. `cluster` (bench/cluster.mjs, issue 31): 1, 2, 3 instances on one
 *    PostgreSQL + Redis, writes and reads, per-process CPU and the
 *    backends' wait events; only when named.
 * 11. `pg-drivers` (bench/pg-drivers.mjs, issue 31): the PostgreSQL client,
 *    `pg` as Airlock uses it against postgres.js, on a journaled write's
 *    statements and on a keyed read; only when named.
 * 9. `notes-scaling` (bench/notes-scaling.mjs), `load` (bench/load.mjs),
 *    `sessions` (bench/sessions.mjs: heap per idle 2025-era session against
 *    a bare SDK server) and `soak` (bench/soak.mjs, only when named) — issue #16.
 *
 * Parts: `npm run bench -- <part> [<part>…]` or BENCH_PARTS=a,b.
 * Run with `npm run bench` (builds first; imports from dist/). Env:
 * BENCH_CALLS (2000), BENCH_WRITES (1000), BENCH_PARTS (calls,writes,journal,notes-scaling,load,scene,page,policy; also openapi, mcp,
 * engines, sessions, soak, cluster, pg-drivers), BENCH_MCP_CALLS (1000),
 * BENCH_LOAD_SECONDS (3), BENCH_LOAD_CLIENTS (10,50,200), BENCH_SOAK_SECONDS (600), BENCH_SOAK_RATE (48),
 * BENCH_SOAK_STORE (sqlite), BENCH_SOAK_KERNEL (JSON kernel options),
 * BENCH_BEFORE_DIST (another build's dist/: its kernel's writes legs run beside this one's),
 * BENCH_CLUSTER_SECONDS (5), BENCH_CLUSTER_CLIENTS (24), BENCH_CLUSTER_SIZES (1,2,3), BENCH_REDIS_URL, BENCH_NOTES_ELSEWHERE_MB (20), BENCH_SESSIONS (500),
 * BENCH_SCENE_OPS (1000), BENCH_PAGE_CALLS (2000),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test),
 * BENCH_REQUIRE_PG=1 (fail instead of skipping when PostgreSQL is down),
 * BENCH_SERVER_PROF=1 (CPU profile of the echo servers into bench/results/).
 * Results also go to bench/results/latest.json.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { connection } from '../dist/kernel/connection.js';
import { BENCH_AGENT, ERAS, airlockHttp, airlockKernel, connect } from './servers.mjs';
import { benchOpenapi, printOpenapi } from './openapi.mjs';
import { benchScene } from './scene.mjs';
import { benchPage, printPage } from './page.mjs';
import { benchPolicy, printPolicy } from './policy.mjs';
import { benchEngines, printEngines } from './engines.mjs';
import { benchEnginesReal, printEnginesReal } from './engines-real.mjs';
import { benchMcp, printMcp } from './mcp.mjs';
import { benchWriteRates, printWriteRates } from './writes.mjs';
import { benchNotesScaling, printNotesScaling } from './notes-scaling.mjs';
import { benchLoad, printLoad } from './load.mjs';
import { benchSoak, printSoak } from './soak.mjs';
import { benchSessions, printSessions } from './sessions.mjs';
import { benchCluster, printCluster } from './cluster.mjs';
import { benchPgDrivers, printPgDrivers } from './pg-drivers.mjs';
import { accountFor } from './accounts.mjs';

const int = (name, fallback) => {
  const n = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
const CALLS = int('BENCH_CALLS', 2000);
const WRITES = int('BENCH_WRITES', 1000);
const CONCURRENCY = 8;
const ROUND = 100; // calls per leg per round
// Parts: `npm run bench -- engines load` (arguments) or BENCH_PARTS=engines,load; the soak (10 min) only when named.
const ARG_PARTS = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const PARTS = new Set(
  (ARG_PARTS.length
    ? ARG_PARTS.join(',')
    : (process.env.BENCH_PARTS ?? 'calls,writes,journal,notes-scaling,load,scene,page,policy')
  ).split(','),
);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REQUIRE_PG = process.env.BENCH_REQUIRE_PG === '1';

// ---------------------------------------------------------------- statistics

function stats(ns, wallNs = ns.reduce((a, b) => a + b, 0)) {
  const us = [...ns].map((x) => x / 1000).sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(q * us.length))];
  return {
    n: us.length,
    medianUs: round(at(0.5)),
    p95Us: round(at(0.95)),
    perSecond: round((us.length * 1e9) / wallNs),
  };
}
const round = (x) => Math.round(x * 10) / 10;
const ratio = (a, b) => Math.round((a / b) * 100) / 100;

async function timed(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t);
}

/**
 * Runs each leg `total` times in slices of ROUND, rotating the order every
 * round. With `cpuUs` (a function returning some process's CPU µs) each leg
 * is also charged that process's CPU time across its slices.
 */
async function interleave(legs, total, sharedCpuUs) {
  const samples = new Map(legs.map((l) => [l.key, { ns: [], wallNs: 0, cpuUs: 0 }]));
  for (let r = 0, done = 0; done < total; r++, done += ROUND) {
    const n = Math.min(ROUND, total - done);
    for (let i = 0; i < legs.length; i++) {
      const leg = legs[(r + i) % legs.length];
      const s = samples.get(leg.key);
      const cpuUs = leg.cpuUs ?? sharedCpuUs;
      const cpu0 = cpuUs ? await cpuUs() : 0;
      const t = process.hrtime.bigint();
      s.ns.push(...(await leg.run(n)));
      s.wallNs += Number(process.hrtime.bigint() - t);
      if (cpuUs) s.cpuUs += (await cpuUs()) - cpu0;
    }
  }
  return samples;
}

const sequential = (call) => async (n) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await timed(call));
  return out;
};

/** An MCP tool result, or a kernel call's plain outcome ({ok, value} / a failure). */
function check(result, what) {
  const failed =
    result && 'ok' in result
      ? result.ok !== true
      : result?.isError || result?.content === undefined;
  if (failed) throw new Error(`${what} failed: ${JSON.stringify(result).slice(0, 300)}`);
  return result;
}

// ---------------------------------------------------------------- part 1: round trips

/**
 * The servers run in a child process (bench/servers.mjs), so the
 * client's own CPU time does not sit on the servers' event loop: latency is
 * what a separate client process would see. BENCH_SERVER_PROF=1 writes a
 * CPU profile of the server process to bench/results/.
 */
async function startEchoServers(variant = 'main') {
  const here = fileURLToPath(new URL('./servers.mjs', import.meta.url));
  const execArgv =
    process.env.BENCH_SERVER_PROF === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${fileURLToPath(new URL('./results', import.meta.url))}`]
      : [];
  const child = fork(here, [], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_ECHO_VARIANT: variant },
  });
  const { urls, tokens } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`echo servers exited early (${code})`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const cpuUs = () =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve(m.cpuUs));
      child.send('cpu');
    });
  const exportedBytes = () =>
    new Promise((resolve) => {
      child.once('message', (m) => resolve(m.exportedBytes));
      child.send('exported');
    });
  return { urls, tokens, cpuUs, exportedBytes, close: () => (child.send('close'), exited) };
}

/**
 * The echo servers' children: the main one (Airlock and the bare SDK
 * servers), Airlock with telemetry on (issue 33: its overhead printed), and
 * with BENCH_BEFORE_DIST Airlock as that build has it (before/after in one run).
 */
async function echoChildren() {
  const variants = ['main', 'otel', ...(process.env.BENCH_BEFORE_DIST ? ['before'] : [])];
  const children = [];
  for (const variant of variants) children.push(await startEchoServers(variant));
  return children;
}

async function benchCalls() {
  const children = await echoChildren();
  const clients = [];
  const legs = [];
  for (const era of Object.keys(ERAS)) {
    for (const servers of children) {
      for (const [name, url] of Object.entries(servers.urls)) {
        const client = await connect(url, era, servers.tokens[name]);
        clients.push(client);
        const run = sequential(async () =>
          check(
            await client.callTool({ name: 'ledger_echo', arguments: { text: 'hello' } }),
            `${name} echo`,
          ),
        );
        await run(Math.max(200, CALLS / 10)); // warm-up: JIT, sockets, lazy schemas
        legs.push({ key: `${era}/${name}`, era, server: name, run, cpuUs: servers.cpuUs });
      }
    }
  }
  const samples = await interleave(legs, CALLS);
  const exported = await children[1].exportedBytes();
  for (const c of clients) await c.close();
  for (const servers of children) await servers.close();

  const rows = legs.map((l) => {
    const s = samples.get(l.key);
    return {
      era: l.era,
      server: l.server,
      ...stats(s.ns, s.wallNs),
      serverCpuUs: round(s.cpuUs / s.ns.length),
    };
  });
  const median = (era, server) => rows.find((r) => r.era === era && r.server === server);
  const ratios = {};
  const pairs = [
    ['airlock', 'sdk-server'],
    ['airlock', 'sdk-mcpserver'],
    ['airlock-otel', 'airlock'],
    ['sdk-server-again', 'sdk-server'],
    ...(process.env.BENCH_BEFORE_DIST ? [['airlock', 'airlock-before']] : []),
  ];
  for (const era of Object.keys(ERAS)) {
    for (const [one, base] of pairs) {
      const [a, b] = [median(era, one), median(era, base)];
      ratios[`${era} ${one}/${base}`] = {
        median: ratio(a.medianUs, b.medianUs),
        p95: ratio(a.p95Us, b.p95Us),
        callsPerSecond: ratio(a.perSecond, b.perSecond),
        serverCpu: ratio(a.serverCpuUs, b.serverCpuUs),
      };
    }
  }
  return { rows, ratios, otelExportedBytes: exported };
}

// ---------------------------------------------------------------- part 2: journaled writes

async function pgReachable() {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: error.message || String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropSchema(schema) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function createSchema(schema) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  } finally {
    await client.end();
  }
}

async function grant(kernel, request, connectionId) {
  await request();
  const pending = (await kernel.consent.pending()).find((p) => p.connection === connectionId);
  if (pending) await kernel.consent.approve(pending.id, null);
}

/** One store under test: a kernel, an HTTP app on it, granted connections, and its write legs. */
async function writeTarget(name, storeSpec) {
  const k = await airlockKernel(storeSpec);
  const http = await airlockHttp(k.kernel);
  const conn = connection('bench:writer', 'internal');
  await grant(
    k.kernel,
    () => k.kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn }),
    conn.id,
  );
  const client = await connect(http.url, 'modern', http.token);
  await grant(
    k.kernel,
    () => client.callTool({ name: 'ledger_request_write_access', arguments: {} }),
    `agent:${BENCH_AGENT}`,
  );

  let seq = 0;
  const written = [];
  const append = async (args) =>
    check(
      await k.kernel.call('ledger', 'ledger_append', args, { connection: conn }),
      `${name} append`,
    );
  const fresh = (prefix) => {
    const i = seq++;
    return {
      operationID: randomUUID(),
      account: accountFor(`${prefix}-${i % 64}`, Math.floor(i / 64)),
      amount: 1,
      expectedVersion: null,
    };
  };
  let replayAt = 0;
  const legs = {
    sequential: sequential(async () => {
      const args = fresh('seq');
      written.push(args);
      await append(args);
    }),
    replay: sequential(() => append(written[replayAt++ % written.length])),
    concurrent: async (n) => {
      const out = [];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          for (let i = w; i < n; i += CONCURRENCY)
            out.push(await timed(() => append(fresh(`c${w}`))));
        }),
      );
      return out;
    },
    http: sequential(async () =>
      check(
        await client.callTool({ name: 'ledger_append', arguments: fresh('http') }),
        `${name} http append`,
      ),
    ),
  };
  for (const run of Object.values(legs)) await run(50); // warm-up
  return {
    name,
    legs,
    async close() {
      await client.close();
      await http.close();
      await k.close();
    },
  };
}

async function benchWrites() {
  const pgState = await pgReachable();
  if (!pgState.ok && REQUIRE_PG)
    throw new Error(
      `PostgreSQL unreachable at ${PG_URL} and BENCH_REQUIRE_PG=1: ${pgState.reason}`,
    );
  if (!pgState.ok)
    console.log(`! PostgreSQL unreachable at ${PG_URL} (${pgState.reason}); skipping its rows.\n`);
  const schema = `airlock_bench_${process.pid}_${Date.now()}`;
  const targets = [await writeTarget('sqlite')];
  try {
    if (pgState.ok)
      targets.push(
        await writeTarget(
          'postgres',
          `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`,
        ),
      );
    const plan = {
      sequential: WRITES,
      replay: WRITES,
      concurrent: WRITES,
      http: Math.ceil(WRITES / 2),
    };
    const rows = [];
    for (const [variant, total] of Object.entries(plan)) {
      const samples = await interleave(
        targets.map((t) => ({ key: t.name, run: t.legs[variant] })),
        total,
      );
      for (const t of targets)
        rows.push({
          variant,
          store: t.name,
          ...stats(samples.get(t.name).ns, samples.get(t.name).wallNs),
        });
    }
    const ratios = {};
    if (pgState.ok) {
      for (const variant of Object.keys(plan)) {
        const [s, p] = ['sqlite', 'postgres'].map((store) =>
          rows.find((r) => r.variant === variant && r.store === store),
        );
        ratios[variant] = {
          writesPerSecondSqliteOverPostgres: ratio(s.perSecond, p.perSecond),
          medianSqliteOverPostgres: ratio(s.medianUs, p.medianUs),
        };
      }
    }
    return {
      postgres: pgState.ok ? { url: PG_URL, schema } : { skipped: pgState.reason },
      rows,
      ratios,
    };
  } finally {
    for (const t of targets) await t.close();
    if (pgState.ok) await dropSchema(schema);
  }
}

// ---------------------------------------------------------------- report

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i < 2 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
      .join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main() {
  const started = Date.now();
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    config: { CALLS, WRITES, CONCURRENCY, ROUND },
  };

  if (PARTS.has('calls')) {
    results.calls = await benchCalls();
    console.log(
      `tools/call ledger_echo over loopback HTTP, SDK v2 client, ${CALLS} sequential calls per row (interleaved in rounds of ${ROUND})\n`,
    );
    console.log(
      table(
        ['era', 'server', 'median µs', 'p95 µs', 'calls/s', 'server CPU µs/call'],
        results.calls.rows.map((r) => [
          r.era,
          r.server,
          r.medianUs,
          r.p95Us,
          r.perSecond,
          r.serverCpuUs,
        ]),
      ),
    );
    for (const [pair, r] of Object.entries(results.calls.ratios))
      console.log(
        `${pair}: median ×${r.median}, p95 ×${r.p95}, calls/s ×${r.callsPerSecond}, server CPU/call ×${r.serverCpu}`,
      );
    console.log(
      `telemetry on (issue 33): airlock-otel exported ${results.calls.otelExportedBytes} bytes of OTLP to a loopback sink; its overhead is the airlock-otel/airlock rows above`,
    );
    for (const era of Object.keys(ERAS)) {
      const r = results.calls.ratios[`${era} airlock/sdk-server`];
      const aa = results.calls.ratios[`${era} sdk-server-again/sdk-server`];
      const met = (x) => (x <= 1.1 ? 'met' : 'NOT met');
      console.log(
        `target (issue 31): ${era} trivial call ≤ ×1.10 sdk-server — median ×${r.median} (${met(r.median)}), server CPU/call ×${r.serverCpu} (${met(r.serverCpu)}); the same server twice (A/A) in this run: median ×${aa.median}, server CPU/call ×${aa.serverCpu}`,
      );
    }
    console.log('');
  }

  const pgState = await pgReachable();
  if (!pgState.ok && REQUIRE_PG)
    throw new Error(
      `PostgreSQL unreachable at ${PG_URL} and BENCH_REQUIRE_PG=1: ${pgState.reason}`,
    );
  const pgBench = {
    ok: pgState.ok,
    url: PG_URL,
    schema: `airlock_bench_${process.pid}_${Date.now()}`,
  };
  const dropBenchSchemas = async () => {
    if (!pgState.ok) return;
    for (const suffix of ['', '_before', '_notes', '_notes_base', '_load'])
      await dropSchema(`${pgBench.schema}${suffix}`);
  };
  if (
    !pgState.ok &&
    ['writes', 'notes-scaling', 'load', 'soak', 'cluster', 'pg-drivers'].some((p) => PARTS.has(p))
  )
    console.log(`! PostgreSQL unreachable at ${PG_URL} (${pgState.reason}); skipping its rows.\n`);

  try {
    if (PARTS.has('writes')) {
      if (pgState.ok) await createSchema(pgBench.schema);
      results.writes = await benchWriteRates({ writes: WRITES, pg: pgBench });
      printWriteRates(results.writes, table);
    }
    if (PARTS.has('notes-scaling')) {
      results.notesScaling = await benchNotesScaling({ pg: pgBench });
      printNotesScaling(results.notesScaling, table);
    }
    if (PARTS.has('load')) {
      if (pgState.ok) await createSchema(`${pgBench.schema}_load`);
      results.load = await benchLoad({ pg: pgBench });
      printLoad(results.load, table);
    }
    if (PARTS.has('cluster')) {
      results.cluster = await benchCluster({ pg: pgBench });
      printCluster(results.cluster, table);
    }
    if (PARTS.has('pg-drivers') && pgState.ok) {
      results.pgDrivers = await benchPgDrivers({ url: PG_URL });
      printPgDrivers(results.pgDrivers);
      console.log('');
    }
    if (PARTS.has('soak')) {
      if (pgState.ok) await createSchema(`${pgBench.schema}_load`);
      results.soak = await benchSoak({ pg: pgBench });
      printSoak(results.soak, table);
    }
  } finally {
    await dropBenchSchemas();
  }

  if (PARTS.has('journal')) {
    results.journal = await benchWrites();
    console.log(
      `ledger_append, journaled, fresh operationIDs (replay: same operationID again); ${WRITES} per row (http: ${Math.ceil(WRITES / 2)})`,
    );
    console.log(
      `  sequential/replay/concurrent: kernel.call in process (concurrent: ${CONCURRENCY} in flight); http: modern era over loopback\n`,
    );
    console.log(
      table(
        ['variant', 'store', 'median µs', 'p95 µs', 'writes/s'],
        results.journal.rows.map((r) => [r.variant, r.store, r.medianUs, r.p95Us, r.perSecond]),
      ),
    );
    for (const [variant, r] of Object.entries(results.journal.ratios)) {
      console.log(
        `${variant}: sqlite/postgres writes/s ×${r.writesPerSecondSqliteOverPostgres}, median latency ×${r.medianSqliteOverPostgres}`,
      );
    }
    console.log('');
  }

  if (PARTS.has('scene')) {
    results.scene = await benchScene();
    console.log(
      `scene history, ${results.scene.ops} ops per row (durable: fsynced op log; baseline: in memory)\n`,
    );
    console.log(
      table(
        ['measure', 'durable/s', 'in memory/s', 'ratio'],
        Object.keys(results.scene.durable).map((k) => [
          k,
          results.scene.durable[k],
          results.scene.inMemory[k],
          results.scene.ratios[k],
        ]),
      ),
    );
    const sj = results.scene.sceneJson200Pages;
    console.log(`scene.json, 200 pages: median ${sj.medianMs} ms, ${sj.bytes} bytes\n`);
  }

  if (PARTS.has('page')) {
    results.page = await benchPage({ interleave, sequential, stats, ratio });
    printPage(results.page, table);
  }

  if (PARTS.has('policy')) {
    results.policy = await benchPolicy({ interleave, sequential, stats, ratio, calls: CALLS });
    printPolicy(results.policy, table);
  }

  if (PARTS.has('engines')) {
    results.engines = await benchEngines();
    printEngines(results.engines, table);
  }

  if (PARTS.has('engines-real')) {
    results.enginesReal = await benchEnginesReal();
    printEnginesReal(results.enginesReal, table);
  }

  if (PARTS.has('openapi')) {
    results.openapi = await benchOpenapi();
    printOpenapi(results.openapi, table);
  }

  if (PARTS.has('sessions')) {
    results.sessions = await benchSessions({ sessions: int('BENCH_SESSIONS', 500) });
    printSessions(results.sessions, table);
  }
  if (PARTS.has('mcp')) {
    results.mcp = await benchMcp({ interleave, sequential, stats, ratio });
    printMcp(results.mcp, table);
  }

  results.elapsedSeconds = Math.round((Date.now() - started) / 100) / 10;
  const out = join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`done in ${results.elapsedSeconds}s; results in bench/results/latest.json`);
}

await main().catch((error) => {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
