/**
 * Upstream metrics (issue 33): a door that reports its upstreams
 * (`Door.status`, door-neutral) shows them in `/metrics` —
 * `airlock_upstream_up`, `airlock_upstream_restarts_total`,
 * `airlock_upstream_calls_in_flight`. Killing a stdio upstream of the mcp
 * door moves its restart counter once it is back.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheus, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient } from '../helpers/mcp-client.js';
import { startServe, type Served } from '../helpers/servers.js';
import { waitFor } from '../helpers/wait.js';
import { serverBin } from '../doors/mcp/helpers.js';

const value = (families: PrometheusFamily[], name: string, labels: Record<string, string>) => {
  const found = families
    .find((f) => f.name === name)
    ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return found ? Number(found.value) : undefined;
};

describe('upstream metrics', () => {
  let dir: string;
  let served: Served;
  let metricsUrl: string;
  let client: Client;
  const ev = { door: 'mcp', upstream: 'ev' };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-upstream-metrics-'));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        upstreams: { ev: { command: process.execPath, args: [serverBin('everything')] } },
      }),
    );
    served = await startServe([
      '--data',
      join(dir, 'data'),
      '--doors',
      'ledger',
      '--config',
      config,
      '--metrics-port',
      '0',
    ]);
    metricsUrl = /Metrics\s+(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(served.stdout())![1]!;
    client = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    served?.child.kill('SIGTERM');
    await served?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async () => parsePrometheus(await (await fetch(metricsUrl)).text());
  const upstreams = async () => {
    const res = await fetch(`${served.url}/api/v1/upstreams`, {
      headers: { authorization: `Bearer ${served.ownerToken!}` },
    });
    return ((await res.json()) as { upstreams: { name: string; pid: number | null }[] }).upstreams;
  };

  it('a killed stdio upstream comes back and airlock_upstream_restarts_total moves', async () => {
    await waitFor(async () => value(await scrape(), 'airlock_upstream_up', ev) === 1);
    const before = await scrape();
    expect(before.find((f) => f.name === 'airlock_upstream_restarts_total')?.type).toBe('COUNTER');
    expect(value(before, 'airlock_upstream_restarts_total', ev)).toBe(0);
    const pid = (await upstreams()).find((u) => u.name === 'ev')!.pid!;
    expect(pid).toBeGreaterThan(0);

    process.kill(pid, 'SIGKILL');
    await waitFor(async () => value(await scrape(), 'airlock_upstream_restarts_total', ev) === 1, {
      timeoutMs: 20_000,
    });
    const after = await scrape();
    expect(value(after, 'airlock_upstream_up', ev)).toBe(1);
    expect((await upstreams()).find((u) => u.name === 'ev')!.pid).not.toBe(pid);
  }, 40_000);

  it('airlock_upstream_calls_in_flight counts a call the upstream has not answered yet', async () => {
    expect(value(await scrape(), 'airlock_upstream_calls_in_flight', ev)).toBe(0);
    const call = client.callTool(
      { name: 'ev_trigger-long-running-operation', arguments: { duration: 2, steps: 2 } },
      { timeout: 20_000 },
    );
    await waitFor(async () => value(await scrape(), 'airlock_upstream_calls_in_flight', ev) === 1);
    expect((await call).isError).toBeFalsy();
    await waitFor(async () => value(await scrape(), 'airlock_upstream_calls_in_flight', ev) === 0);
  }, 30_000);

  it('docs/operations.md lists every metric /metrics serves, with its type and labels, and no other', async () => {
    const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const rows = new Map(
      [...docs.matchAll(/^\| `(airlock_\w+)`\s*\| (\w+)\s*\|([^|]*)\|/gm)].map((m) => [
        m[1]!,
        { type: m[2]!, labels: new Set([...m[3]!.matchAll(/`(\w+)`/g)].map((l) => l[1]!)) },
      ]),
    );
    // Calls have run (the tests above): every family exists but the scale-out bus lag.
    const families = (await scrape()).filter((f) => f.name.startsWith('airlock_'));
    expect(families.map((f) => f.name).sort()).toEqual(
      [...rows.keys()].filter((n) => n !== 'airlock_event_bus_lag').sort(),
    );
    for (const family of families) {
      const row = rows.get(family.name)!;
      expect(family.type.toLowerCase(), family.name).toBe(row.type);
      const keys = new Set(
        family.metrics.flatMap((m) =>
          Object.keys(m.labels ?? {}).filter((k) => !k.startsWith('otel_scope_') && k !== 'le'),
        ),
      );
      for (const key of keys) expect(row.labels.has(key), `${family.name} label ${key}`).toBe(true);
    }
  });
});
