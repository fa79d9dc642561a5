/**
 * `writes` (issue #16): journaled idempotent writes per second at 1 and 8 in
 * flight (`ledger_append` through `kernel.call`, fresh operationIDs), against
 * the raw rate of the same store doing a comparable insert with one commit
 * (one fsync) per batch — the physical limit of the disk or server here.
 *
 * Raw legs: SQLite — a second file in the same folder, WAL + synchronous=FULL
 * like the store, `batch` rows per transaction; PostgreSQL — a table in the
 * bench schema, `batch` rows per BEGIN…COMMIT on one connection. Legs are
 * interleaved in rounds so machine noise hits all of them alike.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { connection } from '../dist/kernel/connection.js';
import { airlockKernel } from './servers.mjs';

const IN_FLIGHT = 8;
/** The wide leg (issue 31): journaled writes at 64 in flight against 64 rows per commit. */
const WIDE = 64;
const ROW = 'x'.repeat(240); // about a journal row's size

async function grantWrite(kernel, conn) {
  await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
  const pending = (await kernel.consent.pending()).find((p) => p.connection === conn.id);
  if (pending) await kernel.consent.approve(pending.id, null);
}

/** `n` calls of `one`, `width` at a time; returns wall ns. */
async function inFlight(n, width, one) {
  const t = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, w) => {
      while (next < n) {
        next += 1;
        await one(w);
      }
    }),
  );
  return Number(process.hrtime.bigint() - t);
}

function rawSqlite(dir) {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS raw (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO raw (k, v) VALUES (?, ?)');
  const batch = db.transaction((n) => {
    for (let i = 0; i < n; i++) insert.run(randomUUID(), ROW);
  });
  return {
    run: async (rows, size) => {
      const t = process.hrtime.bigint();
      for (let done = 0; done < rows; done += size) batch(Math.min(size, rows - done));
      return Number(process.hrtime.bigint() - t);
    },
    close: async () => db.close(),
  };
}

async function rawPostgres(url, schema) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `CREATE TABLE IF NOT EXISTS "${schema}".raw (k text PRIMARY KEY, v text NOT NULL)`,
  );
  return {
    run: async (rows, size) => {
      const t = process.hrtime.bigint();
      for (let done = 0; done < rows; done += size) {
        await client.query('BEGIN');
        for (let i = 0; i < Math.min(size, rows - done); i++)
          await client.query(`INSERT INTO "${schema}".raw (k, v) VALUES ($1, $2)`, [
            randomUUID(),
            ROW,
          ]);
        await client.query('COMMIT');
      }
      return Number(process.hrtime.bigint() - t);
    },
    close: () => client.end(),
  };
}

async function target(name, storeSpec, raw) {
  const k = await airlockKernel(storeSpec);
  const conns = Array.from({ length: WIDE }, (_, i) => connection(`bench:w${i}`, 'internal'));
  for (const c of conns) await grantWrite(k.kernel, c);
  let seq = 0;
  const append = async (w) => {
    const i = seq++;
    const out = await k.kernel.call(
      'ledger',
      'ledger_append',
      { operationID: randomUUID(), account: `a${w}-${i % 64}`, amount: 1, expectedVersion: null },
      { connection: conns[w] },
    );
    if (out.ok !== true)
      throw new Error(`${name} append failed: ${JSON.stringify(out).slice(0, 300)}`);
  };
  const rawLeg = await raw(k.dir);
  return {
    name,
    legs: {
      'journaled, 1 in flight': (n) => inFlight(n, 1, append),
      [`journaled, ${IN_FLIGHT} in flight`]: (n) => inFlight(n, IN_FLIGHT, append),
      [`journaled, ${WIDE} in flight`]: (n) => inFlight(n, WIDE, append),
      'raw, 1 row per commit': (n) => rawLeg.run(n, 1),
      [`raw, ${IN_FLIGHT} rows per commit`]: (n) => rawLeg.run(n, IN_FLIGHT),
      [`raw, ${WIDE} rows per commit`]: (n) => rawLeg.run(n, WIDE),
    },
    async close() {
      await rawLeg.close();
      await k.close();
    },
  };
}

/**
 * @param {{ writes: number, pg: { ok: boolean, url: string, schema: string } }} options
 */
export async function benchWriteRates({ writes, pg: pgState, round = 100 }) {
  const targets = [await target('sqlite', undefined, (dir) => rawSqlite(dir))];
  try {
    if (pgState.ok) {
      const spec = `${pgState.url}${pgState.url.includes('?') ? '&' : '?'}schema=${pgState.schema}`;
      targets.push(await target('postgres', spec, () => rawPostgres(pgState.url, pgState.schema)));
    }
    const rows = [];
    for (const t of targets) {
      const legs = Object.entries(t.legs);
      for (const [, run] of legs) await run(50); // warm-up
      const wall = new Map(legs.map(([key]) => [key, 0]));
      // CPU of this process (the kernel and store run in it; PostgreSQL's own is not counted).
      const cpu = new Map(legs.map(([key]) => [key, 0]));
      for (let r = 0, done = 0; done < writes; r++, done += round) {
        for (let i = 0; i < legs.length; i++) {
          const [key, run] = legs[(r + i) % legs.length];
          const before = process.cpuUsage();
          wall.set(key, wall.get(key) + (await run(Math.min(round, writes - done))));
          const used = process.cpuUsage(before);
          cpu.set(key, cpu.get(key) + used.user + used.system);
        }
      }
      const perSecond = (key) => Math.round((writes * 1e9) / wall.get(key));
      const rawOf = (key) =>
        perSecond(
          key.includes(`${WIDE} `)
            ? `raw, ${WIDE} rows per commit`
            : `raw, ${IN_FLIGHT} rows per commit`,
        );
      for (const [key] of legs)
        rows.push({
          store: t.name,
          leg: key,
          perSecond: perSecond(key),
          cpuUsPerWrite: Math.round((cpu.get(key) / writes) * 10) / 10,
          ofRawBatched: Math.round((perSecond(key) / rawOf(key)) * 100) / 100,
        });
    }
    return { inFlight: IN_FLIGHT, writes, rows };
  } finally {
    for (const t of targets) await t.close();
  }
}

export function printWriteRates(result, table) {
  console.log(
    `writes: ledger_append journaled (kernel.call, fresh operationIDs) vs the same store's raw insert, ${result.writes} per leg\n`,
  );
  console.log(
    table(
      ['store', 'leg', 'writes/s', 'cpu µs/write', '× raw batched'],
      result.rows.map((r) => [r.store, r.leg, r.perSecond, r.cpuUsPerWrite, r.ofRawBatched]),
    ),
  );
  console.log('');
  printWriteTargets(result, table);
}

/** Issue 31's targets next to what this run measured. */
export function printWriteTargets(result, table) {
  const row = (store, leg) => result.rows.find((r) => r.store === store && r.leg === leg);
  const targets = [];
  const add = (store, what, target, value, met) =>
    value !== undefined && targets.push([store, what, target, value, met ? 'met' : 'NOT met']);
  const s8 = row('sqlite', `journaled, ${IN_FLIGHT} in flight`);
  const s64 = row('sqlite', `journaled, ${WIDE} in flight`);
  add('sqlite', `writes/s, ${IN_FLIGHT} in flight`, '≥ 5000', s8?.perSecond, s8?.perSecond >= 5000);
  add(
    'sqlite',
    `× raw batched, ${WIDE} in flight`,
    '≥ 0.5',
    s64?.ofRawBatched,
    s64?.ofRawBatched >= 0.5,
  );
  add(
    'sqlite',
    `cpu µs/write, ${IN_FLIGHT} in flight`,
    '≤ 200',
    s8?.cpuUsPerWrite,
    s8?.cpuUsPerWrite <= 200,
  );
  const p8 = row('postgres', `journaled, ${IN_FLIGHT} in flight`);
  add(
    'postgres',
    `writes/s, ${IN_FLIGHT} in flight`,
    '≥ 2000',
    p8?.perSecond,
    p8?.perSecond >= 2000,
  );
  if (targets.length === 0) return;
  console.log(table(['store', 'target', 'wanted', 'measured', ''], targets));
  console.log('');
}
