/**
 * The PostgreSQL client, measured (issue 31: "choose the client for it: `pg`
 * as today, or a driver with pipelining (e.g. `postgres`), measured").
 *
 * Both drivers run the same statements on the same tables, legs interleaved
 * in rounds so the machine's drift falls on both:
 * - `read`: one prepared SELECT by key, 8 in flight on a pool of 8.
 * - `write`: a journaled write's shape as Airlock's PostgreSQL store sends it
 *   (group-writer.ts, read-gatherer.ts) — three round trips on one
 *   connection: the replay and grant reads together; BEGIN with the door's
 *   locking read; the door's upsert, the journal insert, the audit insert and
 *   COMMIT together. Nine messages, 8 in flight on a pool of 8.
 * `pg` is used as Airlock uses it: a pool in pipeline mode, named prepared
 * statements. `postgres` (postgres.js) with its own prepared statements
 * (`unsafe(text, args, { prepare: true })`, the same `$n` texts) on a
 * reserved connection, its queries pipelined by issuing them together.
 * Printed per leg: rate, this process's CPU per operation (process.cpuUsage
 * over the leg; the two drivers never run at once) and postgres.js ÷ pg.
 *
 * Part `pg-drivers` of `npm run bench` (only when named), or alone:
 *
 *   node bench/pg-drivers.mjs [operations per leg per round] [rounds]
 *
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import pg from 'pg';
import postgres from 'postgres';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const IN_FLIGHT = 8;
const SCHEMA = `bench_drivers_${process.pid}`;

const SQL = {
  replay: 'SELECT body FROM journal WHERE op = $1',
  grant: 'SELECT body FROM grants WHERE principal = $1',
  lock: 'SELECT value, version FROM records WHERE key = $1 FOR UPDATE',
  upsert:
    'INSERT INTO records (key, value, version) VALUES ($1, $2::jsonb, 1) ' +
    'ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = records.version + 1',
  journal: 'INSERT INTO journal (op, body, at) VALUES ($1, $2::jsonb, $3)',
  audit: 'INSERT INTO audit (body) VALUES ($1) RETURNING id',
  read: 'SELECT value, version FROM records WHERE key = $1',
};
const BEGIN = 'BEGIN ISOLATION LEVEL READ COMMITTED';
const value = (n) =>
  JSON.stringify({ entries: [{ amount: n, at: Date.now(), note: 'x'.repeat(120) }], total: n });

async function setUp(URL) {
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${SCHEMA}`);
  await admin.query(`SET search_path = ${SCHEMA}`);
  await admin.query(`CREATE TABLE records (key text PRIMARY KEY, value jsonb NOT NULL, version int NOT NULL);
    CREATE TABLE journal (op text PRIMARY KEY, body jsonb NOT NULL, at bigint NOT NULL);
    CREATE TABLE audit (id bigserial PRIMARY KEY, body text NOT NULL);
    CREATE TABLE grants (principal text PRIMARY KEY, body jsonb NOT NULL);`);
  for (let w = 0; w < IN_FLIGHT; w++) {
    await admin.query('INSERT INTO grants VALUES ($1, $2)', [`p${w}`, '{"tools":["*"]}']);
  }
  for (let k = 0; k < 1000; k++) {
    await admin.query('INSERT INTO records VALUES ($1, $2, 1)', [`r${k}`, value(k)]);
  }
  return admin;
}

/**
 * A journaled write's statements on one connection, the same for both
 * drivers: `c.prepared(name, values)` runs SQL[name] as a prepared
 * statement, `c.simple(text)` a statement without parameters.
 */
async function journaledWrite(c, w, key, n) {
  const op = randomUUID();
  await Promise.all([c.prepared('replay', [op]), c.prepared('grant', [`p${w}`])]);
  await Promise.all([c.simple(BEGIN), c.prepared('lock', [key])]);
  await Promise.all([
    c.prepared('upsert', [key, value(n)]),
    c.prepared('journal', [op, '{"ok":true}', Date.now()]),
    c.prepared('audit', [`entry ${op}`]),
    c.simple('COMMIT'),
  ]);
}

function pgDriver(URL) {
  const pool = new pg.Pool({
    connectionString: URL,
    pipeline: true,
    options: `-c search_path=${SCHEMA}`,
    max: IN_FLIGHT,
  });
  pool.on('error', () => undefined);
  const prepared = (client, name, values) =>
    client.query({ name: `drv_${name}`, text: SQL[name], values });
  return {
    name: 'pg',
    read: (key) => prepared(pool, 'read', [key]),
    async write(w, key, n) {
      const client = await pool.connect();
      try {
        await journaledWrite(
          {
            prepared: (name, values) => prepared(client, name, values),
            simple: (text) => client.query(text),
          },
          w,
          key,
          n,
        );
      } finally {
        client.release();
      }
    },
    end: () => pool.end(),
  };
}

function postgresJsDriver(URL) {
  const sql = postgres(URL, {
    max: IN_FLIGHT,
    connection: { search_path: SCHEMA },
    onnotice: () => undefined,
  });
  const prepared = (s, name, values) => s.unsafe(SQL[name], values, { prepare: true });
  return {
    name: 'postgres',
    read: (key) => prepared(sql, 'read', [key]),
    async write(w, key, n) {
      const reserved = await sql.reserve();
      try {
        await journaledWrite(
          {
            prepared: (name, values) => prepared(reserved, name, values),
            simple: (text) => reserved.unsafe(text),
          },
          w,
          key,
          n,
        );
      } finally {
        reserved.release();
      }
    },
    end: () => sql.end(),
  };
}

/** `count` operations, IN_FLIGHT at a time; rate and this process's CPU per operation. */
async function leg(run, count) {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, w) => {
      while (next < count) await run(w, next++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { seconds, cpuUs: cpu.user + cpu.system, count };
}

const kinds = {
  // Each writer its own keys (no lock waits between writers), as in the writes bench.
  write: (d) => (w, n) => d.write(w, `w${w}_${n % 50}`, n),
  read: (d) => (_w, n) => d.read(`r${n % 1000}`),
};

/**
 * Both drivers' legs, interleaved; per leg and driver: operations, seconds,
 * this process's CPU (µs).
 */
export async function benchPgDrivers({ url, perRound = 1000, rounds = 6, log = () => {} }) {
  const admin = await setUp(url);
  const drivers = [pgDriver(url), postgresJsDriver(url)];
  const totals = {};
  try {
    for (const d of drivers) for (const make of Object.values(kinds)) await leg(make(d), 200); // warm up
    for (let round = 0; round < rounds; round++) {
      // Alternate who goes first, so neither always follows the other.
      const order = round % 2 === 0 ? drivers : [...drivers].reverse();
      for (const [kind, make] of Object.entries(kinds)) {
        for (const d of order) {
          const r = await leg(make(d), perRound);
          const t = ((totals[kind] ??= {})[d.name] ??= { seconds: 0, cpuUs: 0, count: 0 });
          t.seconds += r.seconds;
          t.cpuUs += r.cpuUs;
          t.count += r.count;
        }
      }
      log(`pg-drivers round ${round + 1}/${rounds}`);
    }
  } finally {
    for (const d of drivers) await d.end();
    await admin.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
    await admin.end();
  }
  return { inFlight: IN_FLIGHT, perRound, rounds, legs: totals };
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');

/** The table: each leg's rate and CPU per operation, postgres.js ÷ pg. */
export function printPgDrivers(result, print = console.log) {
  print(
    `PostgreSQL drivers (issue 31): ${result.inFlight} in flight, ${result.rounds} rounds of ${result.perRound} per leg, interleaved`,
  );
  print(
    '| leg | pg ops/s | pg CPU µs/op | postgres ops/s | postgres CPU µs/op | rate ÷ pg | CPU ÷ pg |',
  );
  print('| --- | --- | --- | --- | --- | --- | --- |');
  for (const [kind, byDriver] of Object.entries(result.legs)) {
    const [a, b] = ['pg', 'postgres'].map((d) => {
      const t = byDriver[d];
      return { rate: t.count / t.seconds, cpu: t.cpuUs / t.count };
    });
    print(
      `| ${kind} | ${fmt(a.rate)} | ${fmt(a.cpu)} | ${fmt(b.rate)} | ${fmt(b.cpu)} | ×${(b.rate / a.rate).toFixed(2)} | ×${(b.cpu / a.cpu).toFixed(2)} |`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await benchPgDrivers({
    url: process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    perRound: Number(process.argv[2] ?? 1000),
    rounds: Number(process.argv[3] ?? 6),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  printPgDrivers(result);
}
