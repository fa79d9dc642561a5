/**
 * `soak` (issue #16): a bounded steady load on one Airlock server (child
 * process, 2025-era clients) reporting, per interval, p50/p99 latency, the
 * server's RSS and its database size — so drift and unbounded growth show.
 *
 * BENCH_SOAK_SECONDS (600), BENCH_SOAK_RATE (48 calls/s over 8 clients),
 * BENCH_SOAK_INTERVALS (10), BENCH_SOAK_STORE (sqlite | postgres),
 * BENCH_SOAK_KERNEL (JSON kernel options for the server, e.g. a short
 * retention: {"retention":{"journalMs":60000,"auditMs":60000}}).
 * Mix per client, in turn: ledger_echo, ledger_append (journaled),
 * rooqi_list_approved_documents, rooqi_append_text on the client's own note.
 * Drift is the last interval's figure over the first's.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeClients, connectClients, percentile, startLoadServers } from './load.mjs';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const RATE = Number(process.env.BENCH_SOAK_RATE ?? 48);
const INTERVALS = Number(process.env.BENCH_SOAK_INTERVALS ?? 10);
const CLIENTS = 8;
const prov = { provider: 'bench', model: 'soak', promptVersion: '1' };

const envelope = (result) => {
  try {
    return JSON.parse(result.content[0].text);
  } catch {
    return null;
  }
};

export async function benchSoak({ pg }) {
  const store = process.env.BENCH_SOAK_STORE === 'postgres' && pg.ok ? 'postgres' : 'sqlite';
  const load = await startLoadServers({
    pg: store === 'postgres' ? pg : { ok: false },
    env: process.env.BENCH_SOAK_KERNEL
      ? { LOAD_KERNEL_OPTIONS: process.env.BENCH_SOAK_KERNEL }
      : {},
  });
  const server = `airlock-${store}`;
  const intervals = [];
  try {
    const clients = await connectClients(load, server, 'legacy', CLIENTS, { grantNotes: true });
    const state = [];
    for (const client of clients) {
      const documentID = randomUUID();
      const created = envelope(
        await client.callTool({
          name: 'rooqi_create_note',
          arguments: { operationID: randomUUID(), documentID, title: 'soak', ...prov },
        }),
      );
      if (created?.code !== 'ready')
        throw new Error(`soak: create_note answered ${JSON.stringify(created)}`);
      state.push({ documentID, revision: 0, appends: 0 });
    }
    const ops = [
      (c) => c.callTool({ name: 'ledger_echo', arguments: { text: 'hello' } }),
      // A fresh account every 50 appends: the test door keeps an account's
      // entries in one record, rewritten whole on each append, so one account
      // for the whole run would measure that record's growth, not Airlock.
      (c, s) =>
        c.callTool({
          name: 'ledger_append',
          arguments: {
            operationID: randomUUID(),
            account: `soak-${s.documentID.slice(0, 8)}-${Math.floor(s.appends++ / 50)}`,
            amount: 1,
            expectedVersion: null,
          },
        }),
      (c) => c.callTool({ name: 'rooqi_list_approved_documents', arguments: {} }),
      async (c, s) => {
        const result = await c.callTool({
          name: 'rooqi_append_text',
          arguments: {
            operationID: randomUUID(),
            documentID: s.documentID,
            text: 's'.repeat(200),
            expectedVersion: s.revision,
            ...prov,
          },
        });
        const env = envelope(result);
        if (env?.code === 'ready') s.revision = JSON.parse(env.resultJSON).committedRevision;
        return result;
      },
    ];
    const intervalMs = (SECONDS * 1000) / INTERVALS;
    const started = Date.now();
    let bucket = { ns: [], errors: 0 };
    const perClientGapMs = (1000 * CLIENTS) / RATE;
    const workers = clients.map(async (client, w) => {
      for (let i = w; Date.now() - started < SECONDS * 1000; i++) {
        const t0 = Date.now();
        const t = process.hrtime.bigint();
        try {
          const result = await ops[i % ops.length](client, state[w]);
          if (result?.isError) bucket.errors++;
        } catch {
          bucket.errors++;
        }
        bucket.ns.push(Number(process.hrtime.bigint() - t));
        const wait = perClientGapMs - (Date.now() - t0);
        if (wait > 0) await sleep(wait);
      }
    });
    const sampler = (async () => {
      for (let k = 1; k <= INTERVALS; k++) {
        await sleep(started + k * intervalMs - Date.now());
        const done = bucket;
        bucket = { ns: [], errors: 0 };
        const usage = await load.rpc({ type: 'usage', server });
        intervals.push({
          atSeconds: Math.round((k * intervalMs) / 1000),
          calls: done.ns.length,
          errors: done.errors,
          p50Ms: Math.round(percentile(done.ns, 0.5) / 1e4) / 100,
          p99Ms: Math.round(percentile(done.ns, 0.99) / 1e4) / 100,
          rssMb: Math.round(usage.rss / 1e5) / 10,
          dbMb: Math.round(usage.dbBytes / 1e4) / 100,
          ...(usage.tableBytes ? splitBytes(usage.tableBytes) : {}),
        });
      }
    })();
    await Promise.all([...workers, sampler]);
    await closeClients(clients);
  } finally {
    await load.close();
  }
  const first = intervals[0];
  const last = intervals[intervals.length - 1];
  return {
    store,
    seconds: SECONDS,
    rate: RATE,
    intervals,
    drift: {
      p50: Math.round((last.p50Ms / first.p50Ms) * 100) / 100,
      p99: Math.round((last.p99Ms / first.p99Ms) * 100) / 100,
      dbMbPerMinute:
        Math.round(((last.dbMb - first.dbMb) / ((last.atSeconds - first.atSeconds) / 60)) * 100) /
        100,
      ...(first.logsMb !== undefined
        ? {
            logsMbPerMinute:
              Math.round(
                ((last.logsMb - first.logsMb) / ((last.atSeconds - first.atSeconds) / 60)) * 100,
              ) / 100,
          }
        : {}),
    },
  };
}

export function printSoak(result, table) {
  console.log(
    `soak: ${result.seconds}s at ${result.rate} calls/s on ${result.store} (echo, journaled append, notes list, notes append)\n`,
  );
  console.log(
    table(
      ['t s', 'calls', 'err', 'p50 ms', 'p99 ms', 'RSS MB', 'db MB', 'logs MB', 'data MB'],
      result.intervals.map((i) => [
        i.atSeconds,
        i.calls,
        i.errors,
        i.p50Ms,
        i.p99Ms,
        i.rssMb,
        i.dbMb,
        i.logsMb ?? '',
        i.dataMb ?? '',
      ]),
    ),
  );
  console.log(
    `drift last/first: p50 ×${result.drift.p50}, p99 ×${result.drift.p99}; database ${result.drift.dbMbPerMinute} MB/min after the first interval${result.drift.logsMbPerMinute !== undefined ? ` (retained logs ${result.drift.logsMbPerMinute} MB/min)` : ''}\n`,
  );
}

/** The retained logs (journal, audit, event log: what retention bounds) against everything else. */
const LOGS = new Set(['journal', 'audit', 'event_log']);
function splitBytes(tableBytes) {
  let logs = 0;
  let data = 0;
  for (const [table, bytes] of Object.entries(tableBytes)) {
    if (LOGS.has(table)) logs += bytes;
    else data += bytes;
  }
  return { logsMb: Math.round(logs / 1e4) / 100, dataMb: Math.round(data / 1e4) / 100 };
}
