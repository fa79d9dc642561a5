/**
 * A clean inbox across instances (issue 27 item 5, as issue 36 item 2 left
 * it): two `airlock serve` on PostgreSQL and Redis. A consent request is
 * bound to the 2025-era session that asked (its grant would belong to that
 * connection), so when the session ends — closed with DELETE, or expired
 * idle (`http.sessionIdleMs`) — its card leaves the inbox on every instance.
 * A policy ask of the same session stays, marked orphaned: the agent's next
 * identical call may come from another connection.
 */
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { toolJson } from '../helpers/results.js';
import { waitFor } from '../helpers/wait.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';

const IDLE_MS = 2_000;
const dirs: string[] = [];
const served: Served[] = [];
const schema = uniqueSchema('inboxout');
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchema(schema).catch(() => undefined);
});

interface Card {
  id: string;
  kind: string;
  status: string;
  orphanedAt?: number | null;
}

await describeWithServices(
  'scale-out: a session’s consent requests leave every instance’s inbox when it ends',
  ['postgres', 'redis'],
  () => {
    it('closed with DELETE (on either instance), expired idle, or left on a dead instance: gone on the other; its policy ask stays, orphaned', async () => {
      const store = `${PG_URL}?schema=${schema}`;
      const config = join(mkdtempSync(join(tmpdir(), 'airlock-inbox-')), 'config.json');
      dirs.push(join(config, '..'));
      writeFileSync(
        config,
        JSON.stringify({
          http: { sessionIdleMs: IDLE_MS },
          policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] },
        }),
      );
      const start = async () => {
        const d = mkdtempSync(join(tmpdir(), 'airlock-inbox-'));
        dirs.push(d);
        const s = await startServe([
          '--doors',
          'ledger',
          '--data',
          d,
          '--store',
          store,
          '--bus',
          REDIS_URL,
          '--config',
          config,
        ]);
        served.push(s);
        return s;
      };
      const [a, b] = [await start(), await start()];
      const owner = { authorization: `Bearer ${a.ownerToken!}` };
      const inboxOnB = async () =>
        (
          (await (await fetch(`${b.url}/api/v1/approvals`, { headers: owner })).json()) as {
            approvals: Card[];
          }
        ).approvals;

      /** A 2025-era session on instance A (negotiated, stateful: it has an id). */
      const session = async () => {
        const transport = new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${a.agentToken!}` } },
        });
        const client = new Client({ name: 'era-2025', version: '1' });
        await client.connect(transport);
        expect(transport.sessionId).toBeTruthy();
        const call = async (name: string, args: Record<string, unknown> = {}) =>
          toolJson(await client.callTool({ name, arguments: args }));
        return { transport, client, call };
      };

      /** A request on the session sent to `url` (a tools/list, or a DELETE), as another route would. */
      const raw = (url: string, t: StreamableHTTPClientTransport, method = 'POST') =>
        fetch(`${url}/mcp`, {
          method,
          headers: {
            authorization: `Bearer ${a.agentToken!}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': t.sessionId!,
            'mcp-protocol-version': t.protocolVersion ?? '2025-11-25',
          },
          ...(method === 'POST'
            ? { body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }) }
            : {}),
        });

      // 1. Closed with DELETE.
      const first = await session();
      const consent = await first.call('ledger_request_write_access');
      expect(consent.code).toBe('approvalRequired');
      const ask = await first.call('ledger_echo', { text: 'outlives its session' });
      expect(ask.code).toBe('approvalRequired');
      const cards = await inboxOnB();
      expect(cards.find((c) => c.id === consent.approvalID)).toMatchObject({ kind: 'consent' });
      expect(cards.find((c) => c.id === ask.approvalID)).toMatchObject({ kind: 'policy' });
      await first.transport.terminateSession();
      await first.client.close();
      await waitFor(async () => !(await inboxOnB()).some((c) => c.id === consent.approvalID), {
        message: 'the closed session’s consent request gone from B’s inbox',
      });
      // The policy ask stays, and its card says the asking connection is gone.
      const orphaned = (await inboxOnB()).find((c) => c.id === ask.approvalID);
      expect(orphaned?.orphanedAt).toEqual(expect.any(Number));
      // Deciding the gone request on B says what became of it.
      const late = await fetch(`${b.url}/api/v1/approvals/${String(consent.approvalID)}/approve`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({}),
      });
      expect(late.status).toBe(400);
      expect(((await late.json()) as { message: string }).message).toMatch(
        /was withdrawn \(the agent’s connection ended\); nothing was approved/,
      );

      // 2. Expired idle: nothing more is sent on the session.
      const second = await session();
      const idle = await second.call('ledger_request_write_access');
      expect(idle.code).toBe('approvalRequired');
      expect((await inboxOnB()).some((c) => c.id === idle.approvalID)).toBe(true);
      const asked = Date.now();
      await waitFor(async () => !(await inboxOnB()).some((c) => c.id === idle.approvalID), {
        timeoutMs: 20_000,
        message: 'the idle session’s consent request gone from B’s inbox',
      });
      // Not before the session was idle that long.
      expect(Date.now() - asked).toBeGreaterThanOrEqual(IDLE_MS - 200);
      // The session is over on every instance.
      expect((await raw(b.url, second.transport)).status).toBe(404);
      await second.client.close();
      // The policy ask is still there for the owner.
      expect((await inboxOnB()).some((c) => c.id === ask.approvalID)).toBe(true);

      // 3. Closed with DELETE sent to the other instance (a load balancer's choice).
      const third = await session();
      const viaB = await third.call('ledger_request_write_access');
      expect(viaB.code).toBe('approvalRequired');
      const deleted = await raw(b.url, third.transport, 'DELETE');
      expect(deleted.status).toBeLessThan(300);
      await waitFor(async () => !(await inboxOnB()).some((c) => c.id === viaB.approvalID), {
        message: 'the consent request of the session closed on B gone',
      });
      // A's copy of the session goes too: it answers as unknown within a sweep.
      await waitFor(async () => (await raw(a.url, third.transport)).status === 404, {
        timeoutMs: 4 * IDLE_MS,
        message: 'A dropping its copy of the session closed on B',
      });
      await third.client.close();

      // 4. The instance holding the session dies: the other ends it once idle.
      const fourth = await session();
      const orphanedByCrash = await fourth.call('ledger_request_write_access');
      expect(orphanedByCrash.code).toBe('approvalRequired');
      a.child.kill('SIGKILL');
      await a.exited;
      await waitFor(
        async () => !(await inboxOnB()).some((c) => c.id === orphanedByCrash.approvalID),
        { timeoutMs: 20_000, message: 'B ending the dead instance’s idle session' },
      );
      await fourth.client.close().catch(() => undefined);
    }, 90_000);
  },
);
