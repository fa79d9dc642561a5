/**
 * Event-bus lag (issue 33): in scale-out, each instance times every event
 * from its stamp in the shared log to its delivery there, as the histogram
 * `airlock_event_bus_lag` on `/metrics`. An event published on A is counted
 * on B.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheus from 'parse-prometheus-text-format';
import { afterAll, expect, it } from 'vitest';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { startServe, type Served } from '../helpers/servers.js';
import { waitFor } from '../helpers/wait.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';

const dirs: string[] = [];
const served: Served[] = [];
const schema = uniqueSchema('buslag');
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchema(schema).catch(() => undefined);
});

/** The `airlock_event_bus_lag` histogram's count on the instance behind `metricsUrl`. */
async function lagCount(metricsUrl: string): Promise<number> {
  const families = parsePrometheus(await (await fetch(metricsUrl)).text());
  const family = families.find((f) => f.name === 'airlock_event_bus_lag');
  // The parser gives a histogram's count as its +Inf bucket.
  const metric = family?.metrics[0] as { buckets?: Record<string, string> } | undefined;
  return Number(metric?.buckets?.['+Inf'] ?? 0);
}

await describeWithServices('event-bus lag in scale-out', ['postgres', 'redis'], () => {
  it('an event published on one instance is timed on the other as airlock_event_bus_lag', async () => {
    const start = async () => {
      const d = mkdtempSync(join(tmpdir(), 'airlock-buslag-'));
      dirs.push(d);
      const s = await startServe([
        '--doors',
        'ledger',
        '--data',
        d,
        '--store',
        `${PG_URL}?schema=${schema}`,
        '--bus',
        REDIS_URL,
        '--metrics-port',
        '0',
      ]);
      served.push(s);
      return {
        ...s,
        metricsUrl: /Metrics\s+(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(s.stdout())![1]!,
      };
    };
    const a = await start();
    const b = await start();
    const before = await lagCount(b.metricsUrl);
    const client = await connectClient(`${a.url}/mcp`, { token: a.agentToken! });
    try {
      const asked = toolJson(
        await client.callTool({ name: 'ledger_request_write_access', arguments: {} }),
      );
      expect(asked.code).toBe('approvalRequired');
    } finally {
      await client.close();
    }
    // approvalRequested went through A's log and the bus to B.
    await waitFor(async () => (await lagCount(b.metricsUrl)) > before, {
      timeoutMs: 10_000,
      message: "B's bus-lag histogram to count A's event",
    });
  }, 60_000);
});
