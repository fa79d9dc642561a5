/**
 * `load` (issue #16): 10 / 50 / 200 concurrent MCP clients (SDK v2 client,
 * each with its own agent token), both protocol eras, a read tool
 * (`ledger_echo`) and a journaled write (`ledger_append`), on SQLite and
 * PostgreSQL, against a bare SDK v2 server doing the same (echo; one row
 * inserted into the same kind of store per write). The servers run in a
 * child process (bench/load-server.mjs); server CPU per call is that
 * process's CPU time over the cell divided by the calls answered.
 *
 * BENCH_LOAD_STORES (sqlite,postgres) picks the stores.
 * Each cell runs BENCH_LOAD_SECONDS (3) after a short warm-up; an Airlock
 * cell and its bare cell run back to back. Every client loops one call at a
 * time (closed loop), so throughput and latency are what N agents would see.
 *
 * `soak` (same child): a bounded run at a fixed rate reporting p50/p99, RSS
 * and database size per interval.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { connect } from './servers.mjs';
import { accountFor } from './accounts.mjs';

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 3);
const LEVELS = (process.env.BENCH_LOAD_CLIENTS ?? '10,50,200').split(',').map(Number);

export async function startLoadServers({ pg, env = {} }) {
  const here = fileURLToPath(new URL('./load-server.mjs', import.meta.url));
  const execArgv =
    process.env.BENCH_SERVER_PROF === '1'
      ? ['--cpu-prof', `--cpu-prof-dir=${fileURLToPath(new URL('./results', import.meta.url))}`]
      : [];
  const child = fork(here, [], {
    execArgv,
    env: {
      ...process.env,
      ...env,
      ...(pg.ok ? { LOAD_PG_URL: pg.url, LOAD_PG_SCHEMA: `${pg.schema}_load` } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map();
  let next = 0;
  const ready = new Promise((resolve, reject) => {
    child.on('message', (msg) => {
      if (msg.ready) return resolve(msg);
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(msg.error));
      else p?.resolve(msg);
    });
    child.once('exit', (code) => reject(new Error(`load servers exited early (${code})`)));
  });
  const { servers, tokens } = await ready;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const rpc = (msg) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.send({ ...msg, id });
    });
  return {
    servers,
    tokens,
    rpc,
    close: async () => {
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** Appends this run has made: every cell's writes go to accounts of their own (bench/accounts.mjs). */
let appended = 0;
const appendArgs = () => {
  const n = appended++;
  return {
    operationID: randomUUID(),
    account: accountFor(`acct-${n % 256}`, Math.floor(n / 256)),
    amount: 1,
    expectedVersion: null,
  };
};

/**
 * Client `i`'s own loopback source address (127.0.1.1, 127.0.1.2, …; Linux
 * routes all of 127.0.0.0/8 to lo). The target is "0 busy for clients within
 * their own limits": N agents on one address would instead meet the HTTP
 * app's per-address connection cap (each 2025 session holds its SSE GET and
 * its POSTs open), which protects against one client, not N.
 */
const clientAddress = (i) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

/** Connects `n` clients of an era to a server, each from its own address; Airlock clients each get an agent and write grants. */
export async function connectClients(load, server, era, n, { grantNotes = false } = {}) {
  const airlock = server.startsWith('airlock');
  const tokens = airlock ? (await load.rpc({ type: 'agents', server, count: n })).tokens : [];
  const clients = [];
  for (let i = 0; i < n; i++) {
    const dispatcher = new Agent({ localAddress: clientAddress(i) });
    const client = await connect(load.servers[server], era, tokens[i], { dispatcher });
    clients.push(Object.assign(client, { dispatcher }));
  }
  if (airlock) {
    const asks = ['ledger_request_write_access'];
    if (grantNotes) asks.push('rooqi_request_read_access', 'rooqi_request_write_access');
    for (const name of asks) {
      const asked = await Promise.all(clients.map((c) => c.callTool({ name, arguments: {} })));
      // The expected answer is approvalRequired; any other leaves that client without the grant.
      const refused = asked.filter(
        (r) => !JSON.stringify(r.content ?? '').includes('approvalRequired'),
      );
      const { approved } = await load.rpc({ type: 'approve', server });
      if (refused.length)
        console.log(
          `  ${server}: ${name} approved for ${approved} of ${n} clients; ${refused.length} answered e.g. ${JSON.stringify(refused[0].content).slice(0, 300)}`,
        );
    }
  }
  return clients;
}

/** Closes clients from connectClients and their connection pools. */
export const closeClients = (clients) =>
  Promise.all(
    clients.map(async (c) => {
      await c.close().catch(() => undefined);
      await c.dispatcher.destroy().catch(() => undefined);
    }),
  );

const isBusy = (result) =>
  result?.isError === true && /busy/i.test(JSON.stringify(result.content ?? '').slice(0, 400));

/** Keeps up to 3 distinct texts (numbers masked when comparing) of one kind of answer. */
const keep = (samples, text) => {
  const shape = (t) => t.replace(/\d+/g, '#');
  if (samples.length < 3 && !samples.some((s) => shape(s) === shape(text))) samples.push(text);
};

/** Every client loops calls for `seconds`; returns latencies (ns), errors and busy answers, with sample texts of each. */
export async function closedLoop(clients, call, seconds) {
  const until = Date.now() + seconds * 1000;
  const ns = [];
  let errors = 0;
  let busy = 0;
  let i = 0;
  const samples = [];
  const busySamples = [];
  await Promise.all(
    clients.map(async (client) => {
      while (Date.now() < until) {
        const t = process.hrtime.bigint();
        try {
          const result = await call(client, i++);
          if (isBusy(result)) {
            busy++;
            keep(busySamples, JSON.stringify(result.content).slice(0, 300));
          } else if (result?.isError) {
            errors++;
            keep(samples, JSON.stringify(result.content).slice(0, 300));
          }
        } catch (error) {
          // The HTTP layer's own refusal (503 busy: the per-address connection cap) is busy too.
          if (/"code":"busy"/.test(String(error))) {
            busy++;
            keep(busySamples, String(error).slice(0, 300));
          } else {
            errors++;
            keep(samples, String(error).slice(0, 300));
          }
        }
        ns.push(Number(process.hrtime.bigint() - t));
      }
    }),
  );
  return { ns, errors, busy, samples, busySamples };
}

export const percentile = (ns, q) => {
  if (ns.length === 0) return NaN;
  const s = [...ns].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

const TOOLS = {
  read: (client) => client.callTool({ name: 'ledger_echo', arguments: { text: 'hello' } }),
  write: (client) => client.callTool({ name: 'ledger_append', arguments: appendArgs() }),
};

async function cell(load, server, clients, tool) {
  await closedLoop(clients, TOOLS[tool], 0.5); // warm-up
  const before = await load.rpc({ type: 'usage' });
  const t = process.hrtime.bigint();
  const run = await closedLoop(clients, TOOLS[tool], SECONDS);
  const wallNs = Number(process.hrtime.bigint() - t);
  const after = await load.rpc({ type: 'usage' });
  const calls = run.ns.length;
  return {
    server,
    calls,
    perSecond: Math.round((calls * 1e9) / wallNs),
    p50Ms: Math.round(percentile(run.ns, 0.5) / 1e4) / 100,
    p99Ms: Math.round(percentile(run.ns, 0.99) / 1e4) / 100,
    cpuUsPerCall: Math.round(((after.cpuUs - before.cpuUs) / Math.max(1, calls)) * 10) / 10,
    errors: run.errors,
    busy: run.busy,
    ...(run.samples.length ? { errorSamples: run.samples } : {}),
    ...(run.busySamples.length ? { busySamples: run.busySamples } : {}),
  };
}

export async function benchLoad({ pg }) {
  const load = await startLoadServers({ pg });
  const stores = (pg.ok ? ['sqlite', 'postgres'] : ['sqlite']).filter(
    (s) => !process.env.BENCH_LOAD_STORES || process.env.BENCH_LOAD_STORES.split(',').includes(s),
  );
  const max = Math.max(...LEVELS);
  const rows = [];
  try {
    for (const store of stores) {
      for (const era of ['legacy', 'modern']) {
        const a = await connectClients(load, `airlock-${store}`, era, max);
        const b = await connectClients(load, `bare-${store}`, era, max);
        for (const tool of ['read', 'write']) {
          for (const n of LEVELS) {
            const air = await cell(load, `airlock-${store}`, a.slice(0, n), tool);
            const bare = await cell(load, `bare-${store}`, b.slice(0, n), tool);
            rows.push({ store, era, tool, clients: n, airlock: air, bare });
          }
        }
        await closeClients([...a, ...b]);
      }
    }
  } finally {
    await load.close();
  }
  return { seconds: SECONDS, levels: LEVELS, rows };
}

const r2 = (a, b) => (b > 0 ? Math.round((a / b) * 100) / 100 : NaN);

export function printLoad(result, table) {
  console.log(
    `load: closed-loop clients for ${result.seconds}s per cell; ratios are Airlock / bare SDK v2 server in the same run (legacy = 2025 era, modern = 2026-07-28)\n`,
  );
  console.log(
    table(
      [
        'store',
        'era/tool/clients',
        'calls/s',
        '×bare',
        'p50 ms',
        '×bare',
        'p99 ms',
        'bare p99',
        '×bare',
        'cpu µs/call',
        '×bare',
        'err',
        'busy',
      ],
      result.rows.map((r) => [
        r.store,
        `${r.era}/${r.tool}/${r.clients}`,
        r.airlock.perSecond,
        r2(r.airlock.perSecond, r.bare.perSecond),
        r.airlock.p50Ms,
        r2(r.airlock.p50Ms, r.bare.p50Ms),
        r.airlock.p99Ms,
        r.bare.p99Ms,
        r2(r.airlock.p99Ms, r.bare.p99Ms),
        r.airlock.cpuUsPerCall,
        r2(r.airlock.cpuUsPerCall, r.bare.cpuUsPerCall),
        r.airlock.errors,
        r.airlock.busy,
      ]),
    ),
  );
  // What the err and busy cells were (either leg), so a reader need not open the JSON.
  for (const r of result.rows)
    for (const leg of [r.airlock, r.bare])
      for (const [kind, texts] of [
        ['err', leg.errorSamples],
        ['busy', leg.busySamples],
      ])
        for (const text of texts ?? [])
          console.log(`  ${leg.server} ${r.era}/${r.tool}/${r.clients} ${kind}: ${text}`);
  console.log('');
  printLoadTargets(result, table);
}

/** Issue 31's targets for PostgreSQL's write cells: the worst cell next to each. */
function printLoadTargets(result, table) {
  const cells = result.rows.filter((r) => r.store === 'postgres' && r.tool === 'write');
  if (cells.length === 0) return;
  const worst = (f) => Math.max(...cells.map(f));
  const sum = (f) => cells.reduce((a, r) => a + f(r), 0);
  const p99 = worst((r) => r2(r.airlock.p99Ms, r.bare.p99Ms));
  const cpu = worst((r) => r2(r.airlock.cpuUsPerCall, r.bare.cpuUsPerCall));
  const errors = sum((r) => r.airlock.errors);
  const busy = sum((r) => r.airlock.busy);
  const verdict = (ok) => (ok ? 'met' : 'NOT met');
  console.log(
    table(
      ['postgres write cells (worst)', 'wanted', 'measured', ''],
      [
        ['p99 × bare', '≤ 1.5', p99, verdict(p99 <= 1.5)],
        ['cpu µs/call × bare', '≤ 1.6', cpu, verdict(cpu <= 1.6)],
        ['errors', '0', errors, verdict(errors === 0)],
        ['busy', '0', busy, verdict(busy === 0)],
      ],
    ),
  );
  console.log('');
}
