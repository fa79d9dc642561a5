/**
 * The cluster suite (issue 15 item 8): three `airlock serve` instances on
 * PostgreSQL and a private Redis behind nginx (round-robin, no stickiness).
 * Each test names the point it holds: P1/P2 job hand-off, cancel
 * from another instance, P3 Last-Event-ID on another instance, P5 Redis
 * restart, P8 session failover; and an MCP task's status notifications
 * reaching a listen on another instance than the one running it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { connectClient } from '../helpers/mcp-client.js';
import { listen, taskNotes, withoutMeta } from '../helpers/mcp-listen.js';
import { httpTaskClient } from '../helpers/mcp-tasks.js';
import { toolJson } from '../helpers/results.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { describeWithServices } from '../services/index.js';
import { NGINX, REDIS_SERVER, startCluster, type Cluster } from './cluster.js';
import { openEvents, type EventStream } from './sse.js';

const missing = [NGINX, REDIS_SERVER].filter((bin) => !existsSync(bin));
if (missing.length > 0 && process.env.AIRLOCK_TEST_SKIP_SERVICES !== '1')
  throw new Error(
    `The cluster suite needs ${missing.join(' and ')}: apt-get install -y nginx redis-server ` +
      '(or set AIRLOCK_TEST_NGINX / AIRLOCK_TEST_REDIS_SERVER, or AIRLOCK_TEST_SKIP_SERVICES=1 to skip).',
  );

let cluster: Cluster;
const streams: EventStream[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const s of streams) s.close();
  for (const c of clients) await c.close().catch(() => undefined);
  await cluster?.close();
});

const owner = () => ({ authorization: `Bearer ${cluster.ownerToken}` });
const events = async (base: string, lastEventId?: number) => {
  const s = await openEvents(base, cluster.ownerToken, lastEventId);
  streams.push(s);
  return s;
};
const client = async (base: string, pin?: string) => {
  const c = await connectClient(`${base}/mcp`, {
    name: 'cluster',
    token: cluster.agentToken,
    ...(pin ? { pin } : {}),
  });
  clients.push(c);
  return c;
};
const job = async (id: string, base = cluster.url) =>
  (await (await fetch(`${base}/api/v1/jobs/${id}`, { headers: owner() })).json()) as {
    status: string;
    error: string | null;
  };
const startCount = async (c: Client, to: number) =>
  String(toolJson(await c.callTool({ name: 'ledger_count', arguments: { to } })).jobId);
const finishedOf = (s: EventStream, id: string) =>
  s.events().filter((f) => f.data.event === 'jobFinished' && f.data.id === id);

await describeWithServices(
  'cluster: three instances behind nginx on PostgreSQL and Redis',
  ['postgres', 'redis'],
  () => {
    beforeAll(async () => {
      cluster = await startCluster({ leaseMs: 6_000 });
    }, 90_000);

    it('P3: Last-Event-ID on another instance replays exactly the missed events, no snapshot', async () => {
      const reference = await events(cluster.instanceUrl(2));
      const first = await events(cluster.instanceUrl(0));
      const c = await client(cluster.url);
      const a = await startCount(c, 30);
      await waitFor(() => finishedOf(reference, a).length === 1, { message: 'the first job' });
      await waitFor(() => finishedOf(first, a).length === 1, { message: 'the first job on 0' });
      first.close();
      const seen = first.events();
      const lastSeen = seen.at(-1)!.id;
      // Missed while disconnected: a second job's events.
      const b = await startCount(c, 30);
      await waitFor(() => finishedOf(reference, b).length === 1, { message: 'the second job' });
      const resumed = await events(cluster.instanceUrl(1), lastSeen);
      const missed = reference.events().filter((f) => f.id > lastSeen);
      await waitFor(() => resumed.frames.length >= missed.length, {
        message: `${missed.length} replayed frames`,
      });
      expect(resumed.frames.some((f) => f.data.event === 'snapshot')).toBe(false);
      expect(resumed.frames.slice(0, missed.length)).toEqual(missed);
      // Every instance numbers the same event alike.
      const ref = new Map(reference.events().map((f) => [f.id, f.data]));
      for (const f of seen) expect(ref.get(f.id)).toEqual(f.data);
    }, 60_000);

    it('an MCP task run on one instance is notified, to its end, on a listen opened on another (over Redis)', async () => {
      const tasks = await httpTaskClient(`${cluster.instanceUrl(0)}/mcp`, cluster.agentToken);
      try {
        const { taskId } = (await tasks.create('ledger_count', { to: 150 })) as { taskId: string };
        const l = await listen(`${cluster.instanceUrl(2)}/mcp`, cluster.agentToken, {
          taskIds: [taskId],
        });
        await l.ended;
        expect(l.messages[0]?.params?.['notifications']).toEqual({ taskIds: [taskId] });
        const notes = taskNotes(l.messages, taskId);
        expect(notes.map((n) => n.params?.['status'])).toEqual(['working', 'completed']);
        const {
          resultType: _r,
          _meta: _m,
          ...got
        } = (await tasks.get(taskId)) as Record<string, unknown>;
        expect(withoutMeta(notes[1]!.params)).toEqual(got);
      } finally {
        await tasks.close();
      }
    }, 60_000);

    it('cancel from another instance ends the job cancelled, with one jobFinished', async () => {
      const watch = await events(cluster.instanceUrl(2));
      const id = await startCount(await client(cluster.instanceUrl(0)), 2_000);
      await waitFor(async () => (await job(id)).status === 'running', { message: 'running' });
      const res = await fetch(`${cluster.instanceUrl(1)}/api/v1/jobs/${id}`, {
        method: 'DELETE',
        headers: owner(),
      });
      expect(res.status).toBe(200);
      await waitFor(() => finishedOf(watch, id).length > 0, { message: 'jobFinished' });
      await holdsFor(() => finishedOf(watch, id).length === 1, 500, {
        message: 'one jobFinished for the cancelled job (no second from another instance)',
      });
      expect(finishedOf(watch, id).map((f) => f.data.status)).toEqual(['cancelled']);
      expect((await job(id)).status).toBe('cancelled');
    }, 60_000);

    it('P2: a SIGKILLed instance’s job is failed interrupted by another within the lease, once; P1: restarting the instance leaves a live job alone', async () => {
      const watch = await events(cluster.instanceUrl(2));
      const live = await startCount(await client(cluster.instanceUrl(1)), 1_500);
      const orphan = await startCount(await client(cluster.instanceUrl(0)), 2_000);
      await waitFor(async () => (await job(orphan)).status === 'running', { message: 'running' });
      await cluster.kill(0);
      const killedAt = Date.now();
      await waitFor(async () => (await job(orphan)).status !== 'running', {
        timeoutMs: 15_000,
        message: 'the orphaned job to be taken over',
      });
      // Lease 6 s, swept every lease/3: taken over well within 15 s.
      expect(Date.now() - killedAt).toBeLessThan(15_000);
      expect(await job(orphan)).toMatchObject({ status: 'failed', error: 'interrupted' });
      // A new instance starting while another instance runs a job leaves it running.
      await cluster.restart(0);
      expect((await job(live)).status).toBe('running');
      await waitFor(async () => (await job(live)).status === 'completed', {
        timeoutMs: 30_000,
        message: 'the live job to complete',
      });
      await holdsFor(
        () => finishedOf(watch, orphan).length <= 1 && finishedOf(watch, live).length <= 1,
        500,
        { message: 'at most one jobFinished per job (no second from another instance)' },
      );
      expect(finishedOf(watch, orphan).map((f) => f.data.status)).toEqual(['failed']);
      expect(finishedOf(watch, live).map((f) => f.data.status)).toEqual(['completed']);
    }, 90_000);

    it('P8: a 2025-era session continues on every instance (round-robin) and after the one that opened it dies, with its grant', async () => {
      const c = await client(cluster.url);
      const asked = toolJson(
        await c.callTool({ name: 'ledger_request_write_access', arguments: {} }),
      );
      expect(asked.code).toBe('approvalRequired');
      const approve = await fetch(
        `${cluster.url}/api/v1/approvals/${String(asked.approvalID)}/approve`,
        { method: 'POST', headers: owner() },
      );
      expect(approve.status).toBe(200);
      const account = `acct-${randomUUID().slice(0, 8)}`;
      // Six calls round-robin over three instances: each serves the session at least once.
      for (let v = 0; v < 6; v++) {
        const op = { operationID: randomUUID(), account, amount: 1, expectedVersion: v };
        expect(toolJson(await c.callTool({ name: 'ledger_append', arguments: op }))).toMatchObject({
          committedVersion: v + 1,
        });
      }
      // Knowing the session id grants another agent nothing, on any instance.
      const sessionId = (c.transport as StreamableHTTPClientTransport).sessionId!;
      const made = await fetch(`${cluster.url}/api/v1/agents`, {
        method: 'POST',
        headers: { ...owner(), 'content-type': 'application/json' },
        body: JSON.stringify({ name: `other-${randomUUID().slice(0, 6)}` }),
      });
      const { token } = (await made.json()) as { token: string };
      for (const i of [0, 1, 2]) {
        const res = await fetch(`${cluster.instanceUrl(i)}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'mcp-session-id': sessionId,
            'mcp-protocol-version': '2025-11-25',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        });
        expect(res.status).toBe(404);
      }
      await cluster.kill(1);
      for (let v = 6; v < 9; v++) {
        const op = { operationID: randomUUID(), account, amount: 1, expectedVersion: v };
        expect(toolJson(await c.callTool({ name: 'ledger_append', arguments: op }))).toMatchObject({
          committedVersion: v + 1,
        });
      }
      await cluster.restart(1);
    }, 90_000);

    it('P5: while Redis is down events still reach every instance (from the log), and after it returns, in id order without repeats', async () => {
      const on = [await events(cluster.instanceUrl(0)), await events(cluster.instanceUrl(2))];
      const c = await client(cluster.instanceUrl(1));
      await cluster.stopRedis();
      const during = await startCount(c, 20);
      await waitFor(() => on.every((s) => finishedOf(s, during).length === 1), {
        timeoutMs: 15_000,
        message: 'the job’s events on the other instances while Redis is down',
      });
      await cluster.startRedis();
      const after = await startCount(c, 20);
      await waitFor(() => on.every((s) => finishedOf(s, after).length === 1), {
        timeoutMs: 15_000,
        message: 'the job’s events after Redis returned',
      });
      await holdsFor(() => on.every((s) => finishedOf(s, after).length === 1), 500, {
        message: 'one jobFinished on each stream (no replayed duplicate)',
      });
      const [x, y] = on.map((s) => s.events());
      const ids = x!.map((f) => f.id);
      expect(ids).toEqual([...new Set(ids)].sort((p, q) => p - q));
      const common = Math.max(x![0]!.id, y![0]!.id);
      expect(x!.filter((f) => f.id >= common)).toEqual(y!.filter((f) => f.id >= common));
    }, 60_000);
  },
);
