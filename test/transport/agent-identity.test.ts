/**
 * Agents have identities, not just names (authority.md §1): what an agent
 * was granted — approvals, 15-minute grants, journal receipts, sealed
 * `requestState` — is bound to the id it was made with. Revoking it cancels
 * its pending asks and ends its grants; an agent made again under the same
 * name starts with nothing. Over real HTTP, as a hostile agent would try.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { ownerHeaders } from '../helpers/principals.js';
import { newToken, tokenHash } from '../../src/kernel/authority/principals.js';
import { agentKey } from '../../src/kernel/connection.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()], {
    policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] },
  });
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  owner = await ownerHeaders(tk.kernel);
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

async function makeAgent(name: string): Promise<string> {
  const made = await tk.kernel.principals.addAgent(name);
  if ('ok' in made) throw new Error(made.message);
  return made.token;
}

/** The agent revoked and made again under its name: the new token. */
async function remake(name: string): Promise<string> {
  const revoked = await tk.kernel.principals.revokeAgent(name);
  if ('ok' in revoked) throw new Error(revoked.message);
  return makeAgent(name);
}

const client = (token: string) => connectClient(`${base}/mcp`, { token, pin: MODERN_PROTOCOL });

async function approve(id: unknown, body: Record<string, unknown>) {
  const res = await fetch(`${base}/api/v1/approvals/${String(id)}/approve`, {
    method: 'POST',
    headers: { ...owner, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

const echo = (c: Client, text: string) =>
  c.callTool({ name: 'ledger_echo', arguments: { text } }).then(toolJson);

it('a 15-minute approval does not pass to a later agent of the same name', async () => {
  const first = await client(await makeAgent('erin'));
  const asked = await echo(first, 'once more');
  expect(asked.code).toBe('approvalRequired');
  await approve(asked.approvalID, { scope: '15m' });
  expect(await echo(first, 'once more')).toEqual({ text: 'once more' });
  await first.close();

  const second = await client(await remake('erin'));
  expect((await echo(second, 'once more')).code).toBe('approvalRequired');
  await second.close();
});

it('an approve-once not yet used does not pass to a later agent of the same name', async () => {
  const first = await client(await makeAgent('frank'));
  const asked = await echo(first, 'delete everything');
  expect(asked.code).toBe('approvalRequired');
  await approve(asked.approvalID, { scope: 'once' });
  await first.close();

  const second = await client(await remake('frank'));
  expect((await echo(second, 'delete everything')).code).toBe('approvalRequired');
  await second.close();
});

it('revoking an agent cancels its pending asks and ends its grants', async () => {
  const c = await client(await makeAgent('gina'));
  const consent = await c
    .callTool({ name: 'ledger_request_write_access', arguments: {} })
    .then(toolJson);
  await approve(consent.approvalID, { resource: 'main' });
  const asked = await echo(c, 'pending');
  expect(asked.code).toBe('approvalRequired');
  const ofGina = (list: { connection: string }[]) =>
    list.filter((x) => x.connection.startsWith('agent:gina'));
  expect(ofGina(await tk.kernel.consent.pending())).toHaveLength(1);
  expect(ofGina(await tk.kernel.consent.grants())).toHaveLength(1);
  await c.close();

  await tk.kernel.principals.revokeAgent('gina');
  expect(ofGina(await tk.kernel.consent.pending())).toEqual([]);
  expect(ofGina(await tk.kernel.consent.grants())).toEqual([]);
});

it('a journal receipt does not pass to a later agent of the same name', async () => {
  const writeAccess = async (c: Client) => {
    const asked = await c
      .callTool({ name: 'ledger_request_write_access', arguments: {} })
      .then(toolJson);
    if (asked.code === 'approvalRequired') await approve(asked.approvalID, { resource: 'main' });
  };
  const op = { operationID: randomUUID(), account: 'hank', amount: 5, expectedVersion: 0 };
  const first = await client(await makeAgent('hank'));
  await writeAccess(first);
  const receipt = await first.callTool({ name: 'ledger_append', arguments: op }).then(toolJson);
  expect(receipt).toMatchObject({ committedVersion: 1 });
  await first.close();

  // The new hank's operation is its own: it runs (and meets the version the first one made).
  const second = await client(await remake('hank'));
  await writeAccess(second);
  const again = await second.callTool({ name: 'ledger_append', arguments: op }).then(toolJson);
  expect(again).toMatchObject({ code: 'versionConflict' });
  await second.close();
});

it('a requestState sealed for a revoked agent does not open for a later agent of its name', async () => {
  /** A 2026-era client that shows links; it records the input_required results it gets. */
  const linkClient = async (token: string) => {
    const c = new Client(
      { name: 'link-shower', version: '1' },
      {
        capabilities: { elicitation: { url: {} } },
        versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
      },
    );
    c.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }) as never);
    const transport: Transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await c.connect(transport);
    const states: string[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const result = (message as { result?: Record<string, unknown> }).result;
      if (typeof result?.['requestState'] === 'string') states.push(result['requestState']);
      deliver?.(message, extra);
    };
    return { c, states };
  };
  const first = await linkClient(await makeAgent('ivy'));
  await first.c
    .request(
      { method: 'tools/call', params: { name: 'ledger_echo', arguments: { text: 'sealed' } } },
      z.looseObject({}),
    )
    .catch(() => undefined);
  expect(first.states).toHaveLength(1);
  await first.c.close();

  const second = await linkClient(await remake('ivy'));
  const answer = await second.c
    .request(
      {
        method: 'tools/call',
        params: {
          name: 'ledger_echo',
          arguments: { text: 'sealed' },
          requestState: first.states[0]!,
        },
      },
      z.looseObject({}),
    )
    .then(
      () => null,
      (e: unknown) => e as { code?: number; data?: unknown },
    );
  expect(answer).toMatchObject({ code: -32602, data: { reason: 'invalid_request_state' } });
  await second.c.close();
});

it('an agent made before ids keeps what it was granted: its key is its name', async () => {
  // As an older Airlock left it: an agent record without an id, and a grant keyed by its name.
  const token = newToken('ak_');
  const at = Date.now();
  await tk.kernel.store.transaction(async (tx) => {
    await tx.records.put('agents', 'olga', {
      name: 'olga',
      tokenHash: tokenHash(token),
      createdAt: at,
      revokedAt: null,
    });
    await tx.grants.insert({
      id: randomUUID(),
      connection: 'agent:olga',
      door: 'ledger',
      capability: 'write',
      resource: { id: 'main', name: 'main' },
      createdAt: at,
      expiresAt: at + 15 * 60 * 1000,
      revokedAt: null,
    });
  });
  await makeAgent('olga-peer'); // a change the instance hears of (the epoch moves)
  const c = await client(token);
  const op = { operationID: randomUUID(), account: 'olga', amount: 1, expectedVersion: 0 };
  expect(await c.callTool({ name: 'ledger_append', arguments: op }).then(toolJson)).toMatchObject({
    committedVersion: 1,
  });
  await c.close();
  // Revoked, it loses that grant too.
  await tk.kernel.principals.revokeAgent('olga');
  const ofOlga = (await tk.kernel.consent.grants()).filter((g) => g.connection === 'agent:olga');
  expect(ofOlga).toEqual([]);
});

it('a job of a revoked agent is not found by a later agent of its name', async () => {
  const first = await client(await makeAgent('jack'));
  const started = await first
    .callTool({ name: 'ledger_count', arguments: { to: 10_000 } })
    .then(toolJson);
  const jobId = String(started.jobId);
  await first.close();
  const keyOf = async () => {
    const jack = (await tk.kernel.principals.listAgents()).find(
      (a) => a.name === 'jack' && a.revokedAt === null,
    );
    return agentKey('jack', jack?.id);
  };
  const firstKey = await keyOf();
  expect(await tk.kernel.jobs.seenBy(firstKey).get(jobId)).not.toBeNull();

  await remake('jack');
  const secondKey = await keyOf();
  expect(secondKey).not.toBe(firstKey);
  expect(await tk.kernel.jobs.seenBy(secondKey).get(jobId)).toBeNull();
  expect(await tk.kernel.jobs.seenBy(secondKey).cancel(jobId)).toBe(false);
  await tk.kernel.jobs.cancel(jobId);
});
