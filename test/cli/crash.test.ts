import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { GENESIS, walkChain } from '../../src/kernel/audit/audit-chain.js';
import type { AuditEntry } from '../../src/kernel/records.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const modernClient = (served: Served) =>
  connectClient(new URL('/mcp', served.url), {
    name: 'crash-test',
    version: '1',
    pin: MODERN_PROTOCOL,
    token: served.agentToken!,
  });

/** The chained audit listing of a running server, verified from its start. */
async function verifyAudit(served: Served): Promise<void> {
  const response = await fetch(`${served.url}/api/v1/audit?limit=100000`, {
    headers: { authorization: `Bearer ${served.ownerToken!}` },
  });
  const { entries } = (await response.json()) as { entries: AuditEntry[] };
  const ids = entries.map((e) => e.id);
  expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  const walk = walkChain(GENESIS);
  walk.next(entries);
  expect(walk.result()).toMatchObject({ ok: true, count: entries.length });
}

/** How long the write held in flight across the kill sleeps before it writes (its retry too). */
const HELD_MS = 3_000;

/**
 * SIGKILL in the middle of concurrent journaled writes, then a restart on
 * the same store: `store` is extra `serve` arguments (none: SQLite in `data`).
 */
async function crashMidStream(data: string, store: string[]): Promise<void> {
  const serveArgs = ['--doors', 'ledger', '--data', data, ...store];
  let served = await startServe(serveArgs);
  let client = await modernClient(served);
  const ask = () =>
    client.callTool({ name: 'ledger_request_write_access', arguments: {} }).then(toolJson);
  const first = await ask();
  expect(first.code).toBe('approvalRequired');
  const approve = await fetch(
    `${served.url}/api/v1/approvals/${String(first.approvalID)}/approve`,
    { method: 'POST', headers: { authorization: `Bearer ${served.ownerToken!}` } },
  );
  expect(approve.status).toBe(200);

  const sent = new Map<string, Record<string, unknown>>();
  const acked = new Map<string, Record<string, unknown>>();
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const args = {
        operationID: randomUUID(),
        account: 'acct',
        amount: 1,
        expectedVersion: null,
      };
      sent.set(args.operationID, args);
      try {
        const r = toolJson(await client.callTool({ name: 'ledger_append', arguments: args }));
        if (r.committedVersion !== undefined) acked.set(args.operationID, r);
      } catch {
        return; // the server died under this call: unacknowledged
      }
    }
  };
  const workers = Array.from({ length: 4 }, worker);
  await waitFor(() => acked.size >= 112, {
    timeoutMs: 60_000,
    intervalMs: 5,
    message: '112 acknowledged writes',
  });
  // One write certain to be in flight when the kill lands: the four workers' writes are
  // answered together (one group commit), and could all be answered in the moment
  // between the check below and the kill — then no write would be left unacknowledged.
  const held = {
    operationID: randomUUID(),
    account: 'acct',
    amount: 1,
    expectedVersion: null,
    delayMs: HELD_MS,
  };
  sent.set(held.operationID, held);
  const heldCall = client.callTool({ name: 'ledger_append', arguments: held }).catch(() => null);
  // A few more answers: the held write has reached the server and sleeps there.
  const heldAt = acked.size;
  await waitFor(() => acked.size >= heldAt + 8, {
    timeoutMs: 60_000,
    intervalMs: 5,
    message: 'eight more acknowledged writes',
  });
  served.child.kill('SIGKILL');
  stop = true;
  await Promise.all(workers);
  expect(await heldCall).toBeNull(); // the server died under it
  await served.exited;
  await client.close().catch(() => undefined);

  served = await startServe(serveArgs);
  client = await modernClient(served);
  const account = toolJson(
    await client.callTool({ name: 'ledger_read', arguments: { account: 'acct' } }),
  ) as {
    entries: { operationID: string }[];
    version: number;
  };
  const ids = account.entries.map((e) => e.operationID);
  // Never duplicated.
  expect(new Set(ids).size).toBe(ids.length);
  expect(account.version).toBe(ids.length);
  // Every acknowledged write is there.
  for (const id of acked.keys()) expect(ids).toContain(id);
  // Every other write is either there (committed once) or reported by its state, never silently gone.
  const unacked = [...sent.keys()].filter((id) => !acked.has(id));
  expect(unacked.length).toBeGreaterThan(0); // the kill really landed mid-stream
  for (const id of unacked) {
    const state = toolJson(
      await client.callTool({ name: 'ledger_query_operation', arguments: { operationID: id } }),
    );
    if (ids.includes(id)) expect(state.state).toBe('committed');
    else expect(['not-found', 'prepared-not-submitted']).toContain(state.state);
  }
  // Retrying each unacknowledged write with its own operationID commits it exactly once.
  for (const id of unacked) {
    const r = toolJson(await client.callTool({ name: 'ledger_append', arguments: sent.get(id)! }));
    expect(r.operationID).toBe(id);
  }
  // And retrying an acknowledged one returns its original receipt.
  const [someId, someReceipt] = [...acked.entries()][0]!;
  expect(
    toolJson(await client.callTool({ name: 'ledger_append', arguments: sent.get(someId)! })),
  ).toEqual(someReceipt);
  const after = toolJson(
    await client.callTool({ name: 'ledger_read', arguments: { account: 'acct' } }),
  ) as { entries: { operationID: string }[] };
  const afterIds = after.entries.map((e) => e.operationID);
  expect(new Set(afterIds).size).toBe(afterIds.length);
  expect(new Set(afterIds)).toEqual(new Set(sent.keys()));
  // The audit trail stays ordered and chained across the kill.
  await verifyAudit(served);
  await client.close();
  served.child.kill('SIGTERM');
  expect(await served.exited).toBe(0);
}

describe('crash safety', () => {
  it('after SIGKILL mid-stream, every acknowledged write is present exactly once and every other one is committed once or reported by its state', async () => {
    await crashMidStream(dir, []);
  }, 60_000);
});

const schema = uniqueSchema('crash');
afterAll(() => dropSchema(schema).catch(() => undefined));
await describeWithPostgres('crash safety on PostgreSQL (issue 31: the group writer)', () => {
  it('after SIGKILL mid-stream on PostgreSQL, every acknowledged write is present exactly once and every other one is committed once or reported by its state', async () => {
    const data = mkdtempSync(join(tmpdir(), 'airlock-crash-pg-'));
    try {
      await crashMidStream(data, ['--store', `${PG_URL}?schema=${schema}`]);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 90_000);
});
