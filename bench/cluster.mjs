/**
 * `cluster` (issue 31): 1, 2 and 3 Airlock instances (separate processes,
 * bench/cluster-instance.mjs) on one PostgreSQL schema and one Redis,
 * closed-loop journaled writes (`ledger_append`) and reads (`ledger_read`)
 * with BENCH_CLUSTER_CLIENTS (24) clients shared among the instances, for
 * BENCH_CLUSTER_SECONDS (5) per cell. Reported per cell: calls/s and its
 * ratio to one instance, p50/p99, each instance's CPU (% of a core) and CPU
 * per call, PostgreSQL's CPU (all its processes on this machine, other
 * sessions' included) and the wait events of the instances' backends in
 * `pg_stat_activity`, sampled every 25 ms. After the writes, every
 * acknowledged write is looked up in the journal and the audit chain is
 * walked from its start (ordered, complete, intact).
 *
 * BENCH_BEFORE_DIST (another build's dist/): each size also runs that
 * build's instances, right after this one's, in rows marked `before`.
 */
import { fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { GENESIS, walkChain } from '../dist/kernel/audit/audit-chain.js';

const SECONDS = Number(process.env.BENCH_CLUSTER_SECONDS ?? 5);
const CLIENTS = Number(process.env.BENCH_CLUSTER_CLIENTS ?? 24);
const SIZES = (process.env.BENCH_CLUSTER_SIZES ?? '1,2,3').split(',').map(Number);
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const APP = 'airlock_bench_cluster';
const BUILDS = [
  { tag: '', dist: new URL('../dist/', import.meta.url).href },
  ...(process.env.BENCH_BEFORE_DIST
    ? [{ tag: ' (before)', dist: pathToFileURL(`${process.env.BENCH_BEFORE_DIST}/`).href }]
    : []),
];

function startInstance(index, store, channel, dist) {
  const here = fileURLToPath(new URL('./cluster-instance.mjs', import.meta.url));
  const child = fork(here, [], {
    env: {
      ...process.env,
      CLUSTER_INDEX: String(index),
      CLUSTER_STORE: store,
      CLUSTER_BUS: REDIS,
      CLUSTER_CHANNEL: channel,
      CLUSTER_DIST: dist,
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
    child.once('exit', (code) => reject(new Error(`cluster instance exited early (${code})`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const rpc = (msg) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.send({ ...msg, id });
    });
  return {
    ready,
    rpc,
    close: async () => {
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** CPU time (µs) of every process named `postgres` on this machine. */
function postgresCpuUs() {
  const tick = 1e6 / 100; // USER_HZ
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) continue;
      const fields = stat.slice(close + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

/** Samples the instances' backends every 25 ms until stopped; counts what each was doing. */
function sampleWaits(client) {
  const counts = new Map();
  let samples = 0;
  let stop = false;
  const done = (async () => {
    while (!stop) {
      const { rows } = await client.query(
        `SELECT state, wait_event_type, wait_event FROM pg_stat_activity
         WHERE application_name = $1 AND state <> 'idle'`,
        [APP],
      );
      samples += 1;
      for (const r of rows) {
        const key =
          r.state === 'active'
            ? r.wait_event
              ? `${r.wait_event_type}:${r.wait_event}`
              : 'running'
            : `${r.state}${r.wait_event ? ` (${r.wait_event})` : ''}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return async () => {
    stop = true;
    await done;
    // Backends per sample doing each thing, busiest first.
    return [...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, n]) => `${k} ${(n / Math.max(1, samples)).toFixed(2)}`)
      .join(', ');
  };
}

const percentile = (sorted, q) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function verify(client, schema, acked) {
  const { rows: journal } = await client.query(
    `SELECT count(*)::int AS n FROM "${schema}".journal WHERE state = 'committed'`,
  );
  const { rows: audit } = await client.query(
    `SELECT id, at, connection, door, tool, args_digest, provenance, result, duration_ms, decision, rule, prev_hash, hash FROM "${schema}".audit ORDER BY id`,
  );
  const walk = walkChain(GENESIS);
  walk.next(
    audit.map((r) => ({
      id: Number(r.id),
      at: r.at,
      connection: r.connection,
      door: r.door,
      tool: r.tool,
      argsDigest: r.args_digest,
      provenance: r.provenance === null ? null : JSON.parse(r.provenance),
      result: r.result,
      durationMs: r.duration_ms,
      decision: r.decision,
      rule: r.rule,
      prevHash: r.prev_hash,
      hash: r.hash,
    })),
  );
  const chain = walk.result();
  return {
    journalCommitted: journal[0].n,
    acked,
    auditEntries: audit.length,
    chain: chain.ok ? 'intact' : `BROKEN at ${chain.brokenId}: ${chain.reason}`,
  };
}

/**
 * @param {{ pg: { ok: boolean, url: string, schema: string } }} options
 */
export async function benchCluster({ pg: pgState }) {
  if (!pgState.ok) return { skipped: 'PostgreSQL unreachable', rows: [] };
  const admin = new pg.Client({ connectionString: pgState.url });
  await admin.connect();
  const rows = [];
  const checks = [];
  try {
    for (const size of SIZES)
      for (const build of BUILDS) {
        const schema = `${pgState.schema}_c${size}${build.tag ? 'b' : ''}`;
        await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        const url = new URL(pgState.url);
        url.searchParams.set('schema', schema);
        url.searchParams.set('application_name', APP);
        const instances = [];
        try {
          for (let i = 0; i < size; i++) {
            const instance = startInstance(
              i,
              url.toString(),
              `airlock:bench:${schema}`,
              build.dist,
            );
            instances.push(instance);
            await instance.ready;
          }
          const per = Math.ceil(CLIENTS / size);
          for (const instance of instances) await instance.rpc({ type: 'grant', clients: per });
          let acked = size * per; // one write per client while granting
          for (const tool of ['write', 'read']) {
            const warm = await Promise.all(
              instances.map((i) => i.rpc({ type: 'run', tool, seconds: 0.5 })),
            );
            if (tool === 'write') acked += warm.reduce((a, r) => a + r.calls - r.errors, 0);
            const stopSampling = sampleWaits(admin);
            const pgBefore = postgresCpuUs();
            const t = process.hrtime.bigint();
            const runs = await Promise.all(
              instances.map((i) => i.rpc({ type: 'run', tool, seconds: SECONDS })),
            );
            const wallS = Number(process.hrtime.bigint() - t) / 1e9;
            const pgCpu = postgresCpuUs() - pgBefore;
            const waits = await stopSampling();
            const calls = runs.reduce((a, r) => a + r.calls, 0);
            const errors = runs.reduce((a, r) => a + r.errors, 0);
            const ns = runs.flatMap((r) => r.ns).sort((a, b) => a - b);
            const cpuUs = runs.reduce((a, r) => a + r.cpuUs, 0);
            if (tool === 'write') acked += calls - errors;
            rows.push({
              instances: size,
              build: build.tag,
              tool,
              perSecond: Math.round(calls / wallS),
              p50Ms: Math.round(percentile(ns, 0.5) / 1e4) / 100,
              p99Ms: Math.round(percentile(ns, 0.99) / 1e4) / 100,
              instanceCpu: runs.map((r) => `${Math.round(r.cpuUs / (wallS * 1e4))}%`).join(' '),
              cpuUsPerCall: Math.round(cpuUs / Math.max(1, calls)),
              postgresCpu: `${Math.round(pgCpu / (wallS * 1e4))}%`,
              errors,
              sample: runs.find((r) => r.sample)?.sample ?? null,
              waits,
            });
          }
          checks.push({
            instances: size,
            build: build.tag,
            ...(await verify(admin, schema, acked)),
          });
        } finally {
          for (const instance of instances) await instance.close().catch(() => undefined);
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
        }
      }
  } finally {
    await admin.end();
  }
  const one = (r) =>
    rows.find((o) => o.instances === 1 && o.tool === r.tool && o.build === r.build)?.perSecond;
  for (const r of rows) r.ofOne = one(r) ? Math.round((r.perSecond / one(r)) * 100) / 100 : null;
  return { clients: CLIENTS, seconds: SECONDS, rows, checks };
}

export function printCluster(result, table) {
  if (result.skipped) return console.log(`cluster: skipped (${result.skipped})\n`);
  console.log(
    `cluster: ${result.clients} closed-loop clients (kernel.call inside each instance) over 1..3 instances on one PostgreSQL + Redis, ${result.seconds}s per cell; cpu = % of one core (this machine has 2)\n`,
  );
  console.log(
    table(
      [
        'n',
        'tool',
        'calls/s',
        '× 1 inst',
        'p50 ms',
        'p99 ms',
        'instance cpu',
        'µs cpu/call',
        'postgres cpu',
        'err',
        'wait events (backends per sample)',
      ],
      result.rows.map((r) => [
        r.instances,
        `${r.tool}${r.build}`,
        r.perSecond,
        r.ofOne,
        r.p50Ms,
        r.p99Ms,
        r.instanceCpu,
        r.cpuUsPerCall,
        r.postgresCpu,
        r.errors,
        r.waits,
      ]),
    ),
  );
  for (const r of result.rows)
    if (r.sample) console.log(`  ${r.instances}/${r.tool} error: ${r.sample}`);
  console.log('');
  for (const c of result.checks)
    console.log(
      `  ${c.instances} instance(s)${c.build}: journal committed ${c.journalCommitted} (writes answered ok ≥ ${c.acked}); audit ${c.auditEntries} entries, chain ${c.chain}`,
    );
  const write = (n, build) =>
    result.rows.find((r) => r.instances === n && r.tool === 'write' && r.build === build);
  const three = write(3, '');
  if (three?.ofOne != null) {
    console.log('');
    const verdict = three.ofOne >= 2.5 ? 'met' : 'NOT met';
    const before = write(3, ' (before)')?.ofOne ?? '';
    console.log(
      table(
        ['target', 'wanted', 'measured', '', 'before'],
        [['writes, 3 instances / 1 instance', '≥ 2.5', three.ofOne, verdict, before]],
      ),
    );
  }
  console.log('');
}
