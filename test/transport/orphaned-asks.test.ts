/**
 * An ask outlives its connection (issue 36 item 2): a policy ask is bound to
 * the agent and the call, not to the connection that asked. When a 2025-era
 * session ends, the card stays (marked orphaned) until
 * `approvals.orphanMinutes`; approving it lets the agent's next identical
 * call, from a new connection, run once. A decision on a card that is gone
 * answers a plain sentence saying what became of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { toolJson } from '../helpers/results.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { waitFor } from '../helpers/wait.js';

const ORPHAN_MS = 60_000;
let clock = Date.now();
let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;
let token: string;

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()], {
    now: () => clock,
    approvalOrphanMs: ORPHAN_MS,
    policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] },
  });
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  owner = await ownerHeaders(tk.kernel);
  token = (await agentHeaders(tk.kernel, 'orphan')).authorization!.replace('Bearer ', '');
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

/** A 2025-era session (stateful: it ends with DELETE). */
async function session() {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'reconnecting-host', version: '1' });
  await client.connect(transport);
  return {
    call: (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }).then(toolJson),
    /** Ends the session the way a polite client does (DELETE), then closes. */
    end: async () => {
      await transport.terminateSession();
      await client.close();
    },
  };
}

interface Card {
  id: string;
  status: string;
  orphanedAt?: number | null;
}
const inbox = async () =>
  (
    (await (await fetch(`${base}/api/v1/approvals`, { headers: owner })).json()) as {
      approvals: Card[];
    }
  ).approvals;

const decide = (id: string, verb: 'approve' | 'deny', body: unknown) =>
  fetch(`${base}/api/v1/approvals/${id}/${verb}`, {
    method: 'POST',
    headers: { ...owner, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

describe('a policy ask outlives its connection', () => {
  it('stays in the inbox marked orphaned; approved, the next identical call on a new session runs once', async () => {
    const first = await session();
    const asked = await first.call('ledger_echo', { text: 'after a reconnect' });
    expect(asked.code).toBe('approvalRequired');
    const id = String(asked.approvalID);
    await first.end();
    await waitFor(async () => (await inbox()).some((c) => c.id === id && c.orphanedAt != null), {
      message: 'the card marked orphaned',
    });

    const approved = await decide(id, 'approve', { scope: 'once' });
    expect(approved.status).toBe(200);

    const second = await session();
    expect(await second.call('ledger_echo', { text: 'after a reconnect' })).toEqual({
      text: 'after a reconnect',
    });
    // Once: the same call asks again.
    expect((await second.call('ledger_echo', { text: 'after a reconnect' })).code).toBe(
      'approvalRequired',
    );
    await second.end();
  });

  it('an identical ask from a new session before the owner decides finds the same card', async () => {
    const first = await session();
    const asked = await first.call('ledger_echo', { text: 'one card' });
    await first.end();
    const second = await session();
    const again = await second.call('ledger_echo', { text: 'one card' });
    expect(again.approvalID).toBe(asked.approvalID);
    await second.end();
  });

  it('expires approvals.orphanMinutes after the disconnect, and approving it then says so', async () => {
    const first = await session();
    const asked = await first.call('ledger_echo', { text: 'left too long' });
    const id = String(asked.approvalID);
    await first.end();
    await waitFor(async () => (await inbox()).some((c) => c.id === id && c.orphanedAt != null));
    clock += ORPHAN_MS + 1;
    expect((await inbox()).map((c) => c.id)).not.toContain(id);
    const late = await decide(id, 'approve', { scope: 'once' });
    expect(late.status).toBe(400);
    expect(String(late.body.message)).toMatch(/expired before anyone decided it/);
    expect(String(late.body.message)).not.toMatch(/scope|resource/);
  });
});

describe('a decision on a card that is gone says what became of it', () => {
  it('a consent request whose connection ended was withdrawn: the answer says so, not "approve it with a scope"', async () => {
    const first = await session();
    const asked = await first.call('ledger_request_write_access', {});
    expect(asked.code).toBe('approvalRequired');
    await first.end();
    const id = String(asked.approvalID);
    await waitFor(async () => !(await inbox()).some((c) => c.id === id));
    for (const body of [{ scope: 'once' }, { resource: 'main' }]) {
      const answer = await decide(id, 'approve', body);
      expect(answer.status).toBe(400);
      expect(String(answer.body.message)).toMatch(
        new RegExp(`Request ${id} was withdrawn \\(the agent’s connection ended\\)`),
      );
    }
  });

  it('a denied ask answers that it was already denied', async () => {
    const first = await session();
    const asked = await first.call('ledger_echo', { text: 'denied once' });
    const id = String(asked.approvalID);
    expect((await decide(id, 'deny', { reason: 'no' })).status).toBe(200);
    const answer = await decide(id, 'approve', { scope: 'once' });
    expect(String(answer.body.message)).toBe(`Request ${id} was already denied; nothing changed.`);
    await first.end();
  });
});
