/**
 * Metrics (issue 33): `/metrics` on the main port is the owner's (an agent
 * token gets 403), `--metrics-port` serves it on loopback without a token;
 * the text parses as Prometheus exposition, and its counters move as calls,
 * asks and refusals happen.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheus, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient } from '../helpers/mcp-client.js';
import { startServe, type Served } from '../helpers/servers.js';

const sample = (families: PrometheusFamily[], name: string, labels: Record<string, string>) =>
  Number(
    families
      .find((f) => f.name === name)
      ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value ??
      0,
  );

describe('metrics', () => {
  let dir: string;
  let served: Served;
  let metricsUrl: string;
  let client: Client;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'airlock-metrics-'));
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        policy: {
          rules: [
            { door: 'ledger', tool: 'ledger_count', decision: 'ask' },
            { door: 'ledger', tool: 'ledger_read', decision: 'deny' },
          ],
        },
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
  });
  afterAll(async () => {
    await client?.close();
    served?.child.kill('SIGTERM');
    await served?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async (url = metricsUrl, token?: string) => {
    const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it('/metrics on the main port is the owner’s: an agent token gets 403, none 401', async () => {
    expect((await scrape(`${served.url}/metrics`, served.agentToken!)).status).toBe(403);
    expect((await scrape(`${served.url}/metrics`)).status).toBe(401);
    const owner = await scrape(`${served.url}/metrics`, served.ownerToken!);
    expect(owner.status).toBe(200);
    expect(owner.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(parsePrometheus(owner.text).map((f) => f.name)).toContain('airlock_asks_pending');
  });

  it('counters move as calls, asks and refusals happen', async () => {
    const before = parsePrometheus((await scrape()).text);
    const echo = { door: 'ledger', tool: 'ledger_echo', effect: 'read', outcome: 'ok' };
    const denied = { tool: 'ledger_read', decision: 'deny', outcome: 'notAuthorized' };
    const asked = { tool: 'ledger_count', decision: 'ask', outcome: 'approvalRequired' };

    await client.callTool({ name: 'ledger_echo', arguments: { text: 'a' } });
    await client.callTool({ name: 'ledger_echo', arguments: { text: 'b' } });
    const refused = await client.callTool({ name: 'ledger_read', arguments: { account: 'x' } });
    expect(refused.isError).toBe(true);
    const ask = await client.callTool({ name: 'ledger_count', arguments: { to: 1 } });
    expect(ask.isError).toBe(true);

    const { text } = await scrape();
    const after = parsePrometheus(text);
    const moved = (labels: Record<string, string>) =>
      sample(after, 'airlock_calls_total', labels) - sample(before, 'airlock_calls_total', labels);
    expect(moved(echo)).toBe(2);
    expect(moved(denied)).toBe(1);
    expect(moved(asked)).toBe(1);
    expect(sample(after, 'airlock_asks_pending', { kind: 'policy' })).toBe(1);
    // The test client negotiates the 2025 era: one open session.
    expect(sample(after, 'airlock_sessions', { era: '2025' })).toBe(1);
    expect(sample(after, 'airlock_asks_oldest_age', { kind: 'policy' })).toBeGreaterThanOrEqual(0);
    expect(after.find((f) => f.name === 'airlock_stage_duration')?.type).toBe('HISTOGRAM');
    // One histogram per stage (the parser keeps one label set of a histogram: read the text).
    const stages = [...text.matchAll(/^airlock_stage_duration_count\{[^}]*stage="(\w+)"/gm)];
    expect(new Set(stages.map((m) => m[1]))).toEqual(
      new Set(['validate', 'policy', 'handler', 'audit']),
    );
    expect(after.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        'airlock_call_duration',
        'airlock_store_transaction_duration',
        'airlock_grants_active',
        'airlock_jobs',
      ]),
    );
  });
});
