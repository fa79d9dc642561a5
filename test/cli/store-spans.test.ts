/**
 * Store-transaction spans (issue 33): a journaled write's trace holds the
 * store's transactions as child spans, `db.system` naming the store (SQLite
 * and PostgreSQL), with no statement and no value of the call in them.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testEnv } from '../helpers/cli.js';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { startServe } from '../helpers/servers.js';
import { waitFor } from '../helpers/wait.js';
import { attr, attributeValues, otlpReceiver } from '../helpers/otlp.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';

const ACCOUNT = 'acct-7f3e-secret';
const AMOUNT = 40_417;

/** Serves the ledger door traced, makes one journaled write under a known trace, returns its spans. */
async function journaledWriteSpans(storeArgs: string[], system: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-store-spans-'));
  const receiver = await otlpReceiver();
  const served = await startServe(
    ['--doors', 'ledger', '--data', join(dir, 'data'), ...storeArgs],
    testEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' }),
  );
  const client = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
  try {
    const ask = toolJson(
      await client.callTool({ name: 'ledger_request_write_access', arguments: {} }),
    );
    expect(ask.code).toBe('approvalRequired');
    const approve = await fetch(
      `${served.url}/api/v1/approvals/${String(ask.approvalID)}/approve`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${served.ownerToken!}` },
      },
    );
    expect(approve.status).toBe(200);

    const trace = randomUUID().replaceAll('-', '');
    const written = await client.callTool({
      name: 'ledger_append',
      arguments: {
        operationID: randomUUID(),
        account: ACCOUNT,
        amount: AMOUNT,
        expectedVersion: null,
      },
      _meta: { traceparent: `00-${trace}-${'a'.repeat(16)}-01` },
    });
    expect(written.isError, JSON.stringify(written)).not.toBe(true);

    const ours = () => receiver.spans().filter((s) => s.traceId === trace);
    await waitFor(
      () =>
        ours().some((s) => s.name === 'tools/call ledger_append') &&
        ours().some((s) => s.name === 'journal') &&
        ours().some((s) => s.name === `transaction ${system}`),
      { timeoutMs: 10_000, message: 'the call, its journal stage and a transaction span' },
    );
    const inTrace = new Set(ours().map((s) => s.spanId));
    const transactions = ours().filter((s) => s.name === `transaction ${system}`);
    for (const tx of transactions) {
      expect(attr(tx, 'db.system')).toBe(system);
      expect(attr(tx, 'db.operation.name')).toBe('transaction');
      // A child of a span of the call (the call's span or its handler).
      expect(inTrace.has(tx.parentSpanId!)).toBe(true);
      expect(
        tx.attributes.map((a) => a.key).filter((k) => /statement|query\.text/.test(k)),
      ).toEqual([]);
    }
    // The write itself (ctx.write) is a transaction under the handler span.
    const handler = ours().find((s) => s.name === 'handler')!;
    expect(transactions.some((s) => s.parentSpanId === handler.spanId)).toBe(true);
    // No value of the call in any span.
    expect(
      attributeValues(ours()).filter((v) => v.includes(ACCOUNT) || v.includes(String(AMOUNT))),
    ).toEqual([]);
  } finally {
    await client.close();
    served.child.kill('SIGTERM');
    await served.exited;
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('store-transaction spans', () => {
  it('a journaled write’s trace holds its SQLite transactions as child spans, db.system sqlite, no values', async () => {
    await journaledWriteSpans([], 'sqlite');
  }, 60_000);
});

const schema = uniqueSchema('spans');
afterAll(() => dropSchema(schema).catch(() => undefined));
await describeWithPostgres('store-transaction spans on PostgreSQL', () => {
  it('a journaled write’s trace holds its PostgreSQL transactions as child spans, db.system postgresql, no values', async () => {
    await journaledWriteSpans(['--store', `${PG_URL}?schema=${schema}`], 'postgresql');
  }, 90_000);
});
