/**
 * PostgreSQL journaled writes, two builds A/B in one process (issue 31):
 * `ledger_append` at 1, 8 and 64 in flight, legs interleaved over rounds,
 * with this process's CPU per write and the CPU per write of the build's
 * own PostgreSQL backends (their connections carry the schema as
 * application_name; utime+stime read from /proc, so PostgreSQL must run on
 * this machine). Each build gets its own schema, dropped at the end.
 *
 *   node bench/writes-pg-cpu.mjs <after dist/> <before dist/> [writes per leg]
 *
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { accountCounter } from './accounts.mjs';
const [afterPath, beforePath, N = '400'] = process.argv.slice(2);
const dirUrl = (p) => pathToFileURL(resolve(p) + '/').href;
const [afterDist, beforeDist] = [dirUrl(afterPath), dirUrl(beforePath)];
const URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
async function kernelFrom(dist, schema) {
  const load = (p) => import(dist + p);
  const { createKernel } = await load('kernel/kernel.js');
  const { createEventBus } = await load('kernel/events/events.js');
  const { silentLogger } = await load('kernel/logger.js');
  const { createPostgresStore } = await load('store/postgres/postgres-store.js');
  const { createLedgerDoor } = await load('doors/testing/ledger.js');
  const { connection } = await load('kernel/connection.js');
  const store = await createPostgresStore({ url: `${URL}?application_name=${schema}`, schema });
  const events = await createEventBus();
  const kernel = createKernel({ store, events, logger: silentLogger });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  const conns = [];
  for (let w = 0; w < 64; w++) {
    const c = connection(`bench:w${w}`, 'internal');
    await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: c });
    const p = (await kernel.consent.pending()).find((x) => x.connection === c.id);
    if (p) await kernel.consent.approve(p.id, null);
    conns.push(c);
  }
  const nextAccount = accountCounter();
  const append = async (w) => {
    const out = await kernel.call(
      'ledger',
      'ledger_append',
      {
        operationID: randomUUID(),
        account: nextAccount(`a${w}`),
        amount: 1,
        expectedVersion: null,
      },
      { connection: conns[w] },
    );
    if (out.ok !== true) throw new Error(JSON.stringify(out).slice(0, 300));
  };
  return {
    store,
    app: schema,
    append,
    close: async () => {
      await kernel.close();
      await events.close();
      await store.close();
    },
  };
}
async function inFlight(n, width, one) {
  const t = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, w) => {
      while (next < n) {
        next++;
        await one(w);
      }
    }),
  );
  return Number(process.hrtime.bigint() - t);
}
const legs = [
  ['after', await kernelFrom(afterDist, 'pgw_quick_after')],
  ['before', await kernelFrom(beforeDist, 'pgw_quick_before')],
];
const widths = [1, 8, 64];
const wall = {},
  cpu = {},
  pgcpu = {};
const admin = new pg.Client(URL);
await admin.connect();
async function pgTicks(app) {
  const { rows } = await admin.query(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [app],
  );
  const out = new Map();
  for (const { pid } of rows) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      // utime and stime (fields 14 and 15 of stat), in clock ticks of 10 ms.
      out.set(pid, Number(f[11]) + Number(f[12]));
    } catch {
      // The backend ended between the two reads: its CPU is not counted.
    }
  }
  return out;
}
for (const [, k] of legs) for (const w of widths) await inFlight(30, w, k.append); // warm-up
const rounds = 4,
  per = Math.ceil(Number(N) / rounds);
for (let r = 0; r < rounds; r++)
  for (const w of widths)
    for (const [name, k] of r % 2 ? [...legs].reverse() : legs) {
      const key = `${name} ${w}`;
      const c0 = process.cpuUsage();
      const p0 = await pgTicks(k.app);
      wall[key] = (wall[key] ?? 0) + (await inFlight(per, w, k.append));
      const u = process.cpuUsage(c0);
      cpu[key] = (cpu[key] ?? 0) + u.user + u.system;
      const p1 = await pgTicks(k.app);
      let d = 0;
      for (const [pid, t] of p1) d += t - (p0.get(pid) ?? 0);
      pgcpu[key] = (pgcpu[key] ?? 0) + d * 10000;
    }
for (const key of Object.keys(wall))
  console.log(
    key.padEnd(12),
    'writes/s',
    Math.round((per * rounds * 1e9) / wall[key]),
    'cpu µs/write',
    Math.round(cpu[key] / (per * rounds)),
    'pg backend cpu µs/write',
    Math.round(pgcpu[key] / (per * rounds)),
  );
for (const [name, k] of legs) {
  console.log(name, 'commits', JSON.stringify(k.store.commits));
  await k.close();
}
await admin.end();
const c = new pg.Client(URL);
await c.connect();
for (const s of ['pgw_quick_after', 'pgw_quick_before'])
  await c.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
await c.end();
