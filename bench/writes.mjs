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
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { accountCounter } from './accounts.mjs';

/**
 * BENCH_BEFORE_DIST: another build's dist/ (e.g. main's, built in a copy of
 * the tree). Its kernel runs beside this one, legs interleaved in the same
 * rounds, rows marked `before`: before and after from one run.
 */
const BEFORE_DIST = process.env.BENCH_BEFORE_DIST;
const HERE_DIST = new URL('../dist/', import.meta.url).href;

/** A kernel with the ledger door on `store`, built from the dist/ at `dist` (a URL ending in /). */
async function kernelFrom(dist, store) {
  const load = (path) => import(new URL(path, dist).href);
  const [
    { createKernel },
    { createEventBus },
    { silentLogger },
    { openStore },
    { createLedgerDoor },
  ] = await Promise.all([
    load('kernel/kernel.js'),
    load('kernel/events/events.js'),
    load('kernel/logger.js'),
    load('store/open.js'),
    load('doors/testing/ledger.js'),
  ]);
  const { connection } = await load('kernel/connection.js');
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
  const opened = await openStore({ data: dir, ...(store ? { store } : {}) });
  const events = await createEventBus();
  const kernel = createKernel({
    store: opened.store,
    blobs: opened.blobs,
    events,
    logger: silentLogger,
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  return {
    kernel,
    dir,
    connection,
    async close() {
      await kernel.close();
      await events.close();
      await opened.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

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

/** The journaled legs of one kernel build; `tag` marks a before build's legs. */
async function journaledLegs(name, dist, storeSpec, tag) {
  const k = await kernelFrom(dist, storeSpec);
  const conns = Array.from({ length: WIDE }, (_, i) => k.connection(`bench:w${i}`, 'internal'));
  for (const c of conns) await grantWrite(k.kernel, c);
  const nextAccount = accountCounter();
  const append = async (w) => {
    const out = await k.kernel.call(
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
    if (out.ok !== true)
      throw new Error(`${name} append failed: ${JSON.stringify(out).slice(0, 300)}`);
  };
  return {
    kernel: k,
    legs: {
      [`journaled${tag}, 1 in flight`]: (n) => inFlight(n, 1, append),
      [`journaled${tag}, ${IN_FLIGHT} in flight`]: (n) => inFlight(n, IN_FLIGHT, append),
      [`journaled${tag}, ${WIDE} in flight`]: (n) => inFlight(n, WIDE, append),
    },
  };
}

async function target(name, storeSpec, raw, beforeSpec) {
  const after = await journaledLegs(name, HERE_DIST, storeSpec, '');
  const before = BEFORE_DIST
    ? await journaledLegs(name, pathToFileURL(`${BEFORE_DIST}/`).href, beforeSpec, ' (before)')
    : null;
  const rawLeg = await raw(after.kernel.dir);
  return {
    name,
    legs: {
      ...after.legs,
      ...(before?.legs ?? {}),
      'raw, 1 row per commit': (n) => rawLeg.run(n, 1),
      [`raw, ${IN_FLIGHT} rows per commit`]: (n) => rawLeg.run(n, IN_FLIGHT),
      [`raw, ${WIDE} rows per commit`]: (n) => rawLeg.run(n, WIDE),
    },
    async close() {
      await rawLeg.close();
      await after.kernel.close();
      await before?.kernel.close();
    },
  };
}

/**
 * @param {{ writes: number, pg: { ok: boolean, url: string, schema: string } }} options
 */
export async function benchWriteRates({ writes, pg: pgState, round = 100 }) {
  const targets = [await target('sqlite', undefined, (dir) => rawSqlite(dir), undefined)];
  try {
    if (pgState.ok) {
      const spec = (schema) =>
        `${pgState.url}${pgState.url.includes('?') ? '&' : '?'}schema=${schema}`;
      targets.push(
        await target(
          'postgres',
          spec(pgState.schema),
          () => rawPostgres(pgState.url, pgState.schema),
          // The before build on its own schema (created when missing), dropped with the bench's.
          spec(`${pgState.schema}_before`),
        ),
      );
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

/** Issue 31's targets next to what this run measured (and the before build's value, when run). */
export function printWriteTargets(result, table) {
  const row = (store, leg) => result.rows.find((r) => r.store === store && r.leg === leg);
  const targets = [];
  const add = (store, leg, what, field, wanted, met) => {
    const after = row(store, leg)?.[field];
    if (after === undefined) return;
    const before = row(store, leg.replace('journaled', 'journaled (before)'))?.[field];
    targets.push([store, what, wanted, after, met(after) ? 'met' : 'NOT met', before ?? '']);
  };
  const mid = `journaled, ${IN_FLIGHT} in flight`;
  const wide = `journaled, ${WIDE} in flight`;
  add('sqlite', mid, `writes/s, ${IN_FLIGHT} in flight`, 'perSecond', '≥ 5000', (v) => v >= 5000);
  add('sqlite', wide, `× raw batched, ${WIDE} in flight`, 'ofRawBatched', '≥ 0.5', (v) => v >= 0.5);
  add(
    'sqlite',
    mid,
    `cpu µs/write, ${IN_FLIGHT} in flight`,
    'cpuUsPerWrite',
    '≤ 200',
    (v) => v <= 200,
  );
  add('postgres', mid, `writes/s, ${IN_FLIGHT} in flight`, 'perSecond', '≥ 2000', (v) => v >= 2000);
  if (targets.length === 0) return;
  console.log(table(['store', 'target', 'wanted', 'measured', '', 'before'], targets));
  console.log('');
}
