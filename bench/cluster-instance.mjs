/**
 * One instance of the `cluster` bench part (bench/cluster.mjs): a kernel
 * with the ledger door on the shared PostgreSQL schema and the Redis bus,
 * wired as `airlock serve` wires scale-out (event ids from the store's log,
 * events over Redis). Its clients run in this process through `kernel.call`
 * (no HTTP: the store and the kernel are what is measured), so its CPU is
 * the instance's.
 *
 * IPC: `grant` (its clients ask for write access; the first instance's
 * approvals are decided by whoever sees them), `run` (closed loop of one
 * tool for some seconds; answers calls, errors, latencies and CPU), `close`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accountFor } from './accounts.mjs';

// CLUSTER_DIST: the build to run (bench/cluster.mjs passes BENCH_BEFORE_DIST's for the before rows).
const dist = process.env.CLUSTER_DIST ?? new URL('../dist/', import.meta.url).href;
const load = (path) => import(new URL(path, dist).href);
const { connection } = await load('kernel/connection.js');
const { createKernel } = await load('kernel/kernel.js');
const { createEventBus } = await load('kernel/events/events.js');
const { storeEventLog } = await load('kernel/events/event-log.js');
const { silentLogger } = await load('kernel/logger.js');
const { openStore } = await load('store/open.js');
const { createRedisBusTransport } = await load('store/redis-bus.js');
const { createLedgerDoor } = await load('doors/testing/ledger.js');

const index = Number(process.env.CLUSTER_INDEX);
const dir = mkdtempSync(join(tmpdir(), 'airlock-cluster-bench-'));
const opened = await openStore({ data: dir, store: process.env.CLUSTER_STORE });
const transport = createRedisBusTransport({
  url: process.env.CLUSTER_BUS,
  channel: process.env.CLUSTER_CHANNEL,
});
const events = await createEventBus({ log: storeEventLog(opened.store), transport });
const kernel = createKernel({
  store: opened.store,
  blobs: opened.blobs,
  events,
  logger: silentLogger,
});
kernel.mount(createLedgerDoor());
await kernel.start();

let conns = [];

const TOOLS = {
  write: (conn, w, i) =>
    kernel.call(
      'ledger',
      'ledger_append',
      {
        operationID: randomUUID(),
        account: accountFor(`i${index}-c${w}`, i),
        amount: 1,
        expectedVersion: null,
      },
      { connection: conn },
    ),
  read: (conn, w) =>
    kernel.call('ledger', 'ledger_read', { account: `i${index}-c${w}-0` }, { connection: conn }),
};

async function run({ tool, seconds }) {
  const call = TOOLS[tool];
  const ns = [];
  let errors = 0;
  let sample = null;
  const before = process.cpuUsage();
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    conns.map(async (conn, w) => {
      for (let i = 0; Date.now() < until; i++) {
        const t = process.hrtime.bigint();
        const out = await call(conn, w, i).catch((error) => ({ ok: false, error: String(error) }));
        ns.push(Number(process.hrtime.bigint() - t));
        if (out.ok !== true) {
          errors += 1;
          sample ??= JSON.stringify(out).slice(0, 300);
        }
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  return { calls: ns.length, ns, errors, sample, cpuUs: cpu.user + cpu.system };
}

process.on('message', async (msg) => {
  try {
    if (msg.type === 'grant') {
      conns = Array.from({ length: msg.clients }, (_, w) =>
        connection(`bench:cluster-${index}-${w}`, 'internal'),
      );
      for (const conn of conns) {
        await kernel.call('ledger', 'ledger_request_write_access', {}, { connection: conn });
        const pending = (await kernel.consent.pending()).find((p) => p.connection === conn.id);
        if (pending) await kernel.consent.approve(pending.id, null);
        // One account each for the reads.
        await TOOLS.write(conn, conns.indexOf(conn), 0);
      }
      process.send({ id: msg.id });
    } else if (msg.type === 'run') {
      process.send({ id: msg.id, ...(await run(msg)) });
    } else if (msg.type === 'close') {
      await kernel.close();
      await events.close();
      await opened.store.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
  } catch (error) {
    process.send({ id: msg.id, error: String(error?.stack ?? error) });
  }
});
process.send({ ready: true, pid: process.pid });
