/**
 * MCP tasks (SEP-2663) over real HTTP with the SDK client, on two instances
 * that share one PostgreSQL store and one event bus: a job-starting tool called by a
 * client that negotiated the extension answers a task; the task follows the
 * job on either instance; it waits in `input_required` while the owner's
 * approval is pending; only its own agent reaches it.
 */
import { tmpdir } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { createKernel } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { agentKey } from '../../src/kernel/connection.js';
import { openStore } from '../../src/store/open.js';
import type { ServedDoor, ServingKernel } from '../../src/transport/surface.js';
import { createTaskStore } from '../../src/transport/mcp/tasks/mcp-task-store.js';
import type { Store } from '../../src/kernel/store.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { connectClient } from '../helpers/mcp-client.js';
import { httpTaskClient, type TaskClient } from '../helpers/mcp-tasks.js';
import { toolJson } from '../helpers/results.js';
import { waitFor } from '../helpers/wait.js';

const policy = {
  rules: [
    { tool: 'ledger_count', agent: 'carol', decision: 'ask' as const },
    { tool: 'ledger_append', agent: 'dave', decision: 'ask' as const },
  ],
};

interface Instance {
  kernel: ServingKernel;
  store: Store;
  app: HttpApp;
  mcp: string;
  base: string;
}
const schema = uniqueSchema('mcptasks');
const bus: EventBus[] = [];
let A: Instance;
let B: Instance;
let owner: Record<string, string>;
const tokens: Record<string, string> = {};
const clients: TaskClient[] = [];

/** One instance of the workspace: its own kernel, store connection and HTTP app; the shared bus. */
async function instance(events: EventBus): Promise<Instance> {
  const { store, blobs } = await openStore({ data: tmpdir(), store: `${PG_URL}?schema=${schema}` });
  const kernel = createKernel<ServedDoor>({ store, blobs, events, logger: silentLogger, policy });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  const app = createHttpApp({ kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  return { kernel, store, app, mcp: `${base}/mcp`, base };
}

/** A task client of `agent` on instance A or B (closed after the file). */
async function as(agent: string, on: 'A' | 'B' = 'A', extension = true) {
  const c = await httpTaskClient((on === 'A' ? A : B).mcp, tokens[agent]!, {
    name: `${agent}-${on}`,
    extension,
  });
  clients.push(c);
  return c;
}

/** Fields of an ack beyond `_meta` (the SDK client has already checked `resultType: "complete"`). */
const envelopeFields = (ack: unknown) => Object.keys(ack as object).filter((k) => k !== '_meta');

const rpcCode = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e as { code?: unknown }).code,
  );

await describeWithPostgres('MCP tasks on two instances sharing PostgreSQL and the bus', () => {
  beforeAll(async () => {
    bus.push(await createEventBus());
    A = await instance(bus[0]!);
    B = await instance(bus[0]!);
    owner = await ownerHeaders(A.kernel);
    for (const name of ['alice', 'bob', 'carol', 'dave'])
      tokens[name] = (await agentHeaders(A.kernel, name)).authorization!.replace('Bearer ', '');
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const i of [A, B]) {
      if (!i) continue;
      await i.app.close();
      await i.kernel.close();
      await i.store.close();
    }
    await bus[0]?.close();
    await dropSchema(schema).catch(() => undefined);
  });

  describe('task created', () => {
    it('a job-starting tool answers a CreateTaskResult at once, and tasks/get finds it at once', async () => {
      const alice = await as('alice');
      const created = await alice.create('ledger_count', { to: 20 });
      expect(created).toMatchObject({ resultType: 'task', status: 'working' });
      expect(created).not.toHaveProperty('task');
      expect(created).not.toHaveProperty('result');
      expect(created['ttlMs']).toBeGreaterThan(0);
      expect(Number.isInteger(created['pollIntervalMs'])).toBe(true);
      expect(Date.parse(String(created['createdAt']))).not.toBeNaN();
      const got = await alice.get(String(created['taskId']));
      expect(got).toMatchObject({ taskId: created['taskId'], status: 'working' });
    });

    it('the server advertises the tasks extension under capabilities.extensions', async () => {
      const alice = await as('alice');
      const discovered = await alice.client.discover();
      expect(discovered.capabilities).toMatchObject({
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });
      expect(discovered.capabilities).not.toHaveProperty('tasks');
    });
  });

  describe('progress, status and result', () => {
    it('the task shows the job’s progress while it runs and inlines the job’s outcome when it completes', async () => {
      const alice = await as('alice');
      const { taskId } = (await alice.create('ledger_count', { to: 60 })) as { taskId: string };
      const running = await alice.until(taskId, (t) =>
        /count: \d+\/60/.test(t.statusMessage ?? ''),
      );
      expect(running.status).toBe('working');
      const done = await alice.until(taskId);
      expect(done.status).toBe('completed');
      const summary = done.result?.['structuredContent'] as { jobId: string; status: string };
      expect(summary.status).toBe('completed');
      expect(done.result?.['isError']).toBeUndefined();
      // The task followed a real kernel job, which every instance sees the same.
      expect((await B.kernel.jobs.get(summary.jobId))?.status).toBe('completed');
      expect(done).not.toHaveProperty('error');
    });

    it('instance B reads the status of a task created on instance A', async () => {
      const onA = await as('alice', 'A');
      const onB = await as('alice', 'B');
      const { taskId } = (await onA.create('ledger_count', { to: 5 })) as { taskId: string };
      expect((await onB.until(taskId)).status).toBe('completed');
    });
  });

  describe('cancel', () => {
    it('a second connection of the same agent, on the other instance, cancels the task and its job', async () => {
      const first = await as('alice', 'A');
      const other = await as('alice', 'B');
      const { taskId } = (await first.create('ledger_count', { to: 5000 })) as { taskId: string };
      await first.until(taskId, (t) => /count: [1-9]/.test(t.statusMessage ?? ''));
      const jobsBefore = await A.kernel.jobs.list({ door: 'ledger', status: ['running'] });
      const job = jobsBefore.find((j) => j.kind === 'count');
      expect(job).toBeDefined();
      const ack = await other.cancel(taskId);
      expect(envelopeFields(ack)).toEqual([]);
      expect((await first.get(taskId)).status).toBe('cancelled');
      // The job ran on instance A: the cancel reached it over the bus.
      await waitFor(async () => (await A.kernel.jobs.get(job!.id))?.status === 'cancelled');
      // Cancelling a terminal task is the same empty ack.
      expect(envelopeFields(await other.cancel(taskId))).toEqual([]);
    });
  });

  describe('isolation between agents', () => {
    it('agent B cannot get, update or cancel agent A’s task: it does not exist for B', async () => {
      const alice = await as('alice');
      const bob = await as('bob', 'B');
      const { taskId } = (await alice.create('ledger_count', { to: 3000 })) as { taskId: string };
      expect(await rpcCode(bob.get(taskId))).toBe(-32602);
      expect(await rpcCode(bob.update(taskId, { x: {} }))).toBe(-32602);
      expect(await rpcCode(bob.cancel(taskId))).toBe(-32602);
      expect((await alice.get(taskId)).status).toBe('working');
      await alice.cancel(taskId);
    });

    it('the jobs behind agent A’s task (its runner and the job its tool started) are A’s: B does not find them', async () => {
      const alice = await as('alice');
      const { taskId } = (await alice.create('ledger_count', { to: 3000 })) as { taskId: string };
      const behind = async () => {
        const task = await createTaskStore(A.kernel).read(taskId);
        return [task?.runner, task?.job].filter((j): j is string => typeof j === 'string');
      };
      await waitFor(async () => (await behind()).length === 2, { message: 'runner and job' });
      const ids = await behind();
      const listed = async (agent: string | null) =>
        (await A.kernel.jobs.seenBy(agent).list({ door: 'ledger' })).map((j) => j.id);
      // Jobs belong to the agent's key: its name and the id it was made with.
      const keyOf = async (name: string) => {
        const found = (await A.kernel.principals.listAgents()).find((a) => a.name === name);
        return agentKey(name, found?.id);
      };
      const [aliceKey, bobKey] = [await keyOf('alice'), await keyOf('bob')];
      expect(await listed(aliceKey)).toEqual(expect.arrayContaining(ids));
      expect(await listed(null)).toEqual(expect.arrayContaining(ids));
      expect((await listed(bobKey)).filter((id) => ids.includes(id))).toEqual([]);
      for (const id of ids) {
        expect(await B.kernel.jobs.seenBy(bobKey).get(id)).toBeNull();
        expect(await B.kernel.jobs.seenBy(bobKey).cancel(id)).toBe(false);
      }
      await alice.cancel(taskId);
    });

    it('an unknown task id answers -32602 with what to do next', async () => {
      const alice = await as('alice');
      const failure = await alice.get('no-such-task').catch((e: unknown) => e as Error);
      expect((failure as { code?: number }).code).toBe(-32602);
      expect(String((failure as Error).message)).toMatch(/call the tool again/i);
      expect(await rpcCode(alice.cancel('no-such-task'))).toBe(-32602);
      expect(await rpcCode(alice.update('no-such-task', {}))).toBe(-32602);
    });
  });

  describe('negotiation', () => {
    it('a client without the extension gets the plain result, and tasks/* answer -32021', async () => {
      const plain = await as('alice', 'A', false);
      const value = await plain.client.callTool({ name: 'ledger_count', arguments: { to: 1 } });
      expect(toolJson(value)).toHaveProperty('jobId');
      const refused = await plain
        .get('anything')
        .catch((e: unknown) => e as { code: number; data?: unknown });
      expect(refused).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      });
    });

    it('a 2025-era call without params.task gets no task: it answers its result', async () => {
      const client = await connectClient(A.mcp, { token: tokens['alice']! });
      try {
        const value = await client.callTool({ name: 'ledger_count', arguments: { to: 1 } });
        expect(toolJson(value)).toHaveProperty('jobId');
      } finally {
        await client.close();
      }
    });
  });

  describe('input_required while an approval is pending', () => {
    it('a call the policy asks about waits in input_required with a link to the approval, and runs once the owner approves', async () => {
      const carol = await as('carol', 'B');
      const { taskId } = (await carol.create('ledger_count', { to: 3 })) as { taskId: string };
      const waiting = await carol.until(taskId, (t) => t.status === 'input_required');
      expect(waiting.status).toBe('input_required');
      const request = waiting.inputRequests?.['approval'] as {
        method: string;
        params: { mode: string; url: string };
      };
      expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'url' } });
      const approvalId = decodeURIComponent(request.params.url.split('/#/approvals/')[1]!);
      // The client answering the elicitation is not consent: the task keeps waiting for the owner.
      await carol.update(taskId, { approval: { action: 'accept' } });
      expect((await carol.get(taskId)).status).toBe('input_required');
      const approved = await fetch(`${A.base}/api/v1/approvals/${approvalId}/approve`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ scope: 'once' }),
      });
      expect(approved.status, await approved.clone().text()).toBe(200);
      const done = await carol.until(taskId);
      expect(done.status).toBe('completed');
      expect((done.result?.['structuredContent'] as { status: string }).status).toBe('completed');
    });

    it('a denied approval fails the task with approvalDenied and the reason', async () => {
      const carol = await as('carol');
      const { taskId } = (await carol.create('ledger_count', { to: 4 })) as { taskId: string };
      const waiting = await carol.until(taskId, (t) => t.status === 'input_required');
      const url = (waiting.inputRequests?.['approval'] as { params: { url: string } }).params.url;
      const approvalId = decodeURIComponent(url.split('/#/approvals/')[1]!);
      const denied = await fetch(`${A.base}/api/v1/approvals/${approvalId}/deny`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ reason: 'not now' }),
      });
      expect(denied.status).toBe(200);
      const done = await carol.until(taskId);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({
        data: { code: 'approvalDenied', approvalID: approvalId, reason: 'not now' },
      });
      expect(done.error?.message).toMatch(/not now/);
    });
  });

  describe('long approvals as tasks (issue 30)', () => {
    const approvalOf = (t: { inputRequests?: Record<string, unknown> }) => {
      const request = t.inputRequests?.['approval'] as {
        method: string;
        params: { mode: string; url: string };
      };
      expect(request).toMatchObject({ method: 'elicitation/create', params: { mode: 'url' } });
      expect(request.params.url).toMatch(/\/#\/approvals\//);
      return decodeURIComponent(request.params.url.split('/#/approvals/')[1]!);
    };
    const decide = async (on: Instance, id: string, action: 'approve' | 'deny', body: unknown) => {
      const r = await fetch(`${on.base}/api/v1/approvals/${id}/${action}`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, await r.clone().text()).toBe(200);
    };
    const read = async (account: string) => {
      const dave = await as('dave');
      return dave.client.callTool({ name: 'ledger_read', arguments: { account } });
    };

    it('a tool that is no task, asked about by the policy, answers a task in input_required with the card link; approved on another instance, it completes with the result and the write ran once', async () => {
      const dave = await as('dave', 'A');
      const account = `acct-${Date.now()}`;
      // Write access first: the consent request is a task too, approved on instance B.
      const access = String((await dave.create('ledger_request_write_access', {}))['taskId']);
      await decide(
        B,
        approvalOf(await dave.until(access, (x) => x.status === 'input_required')),
        'approve',
        {},
      );
      expect(JSON.stringify((await dave.until(access)).result)).toMatch(/grantID/);
      const created = await dave.create('ledger_append', {
        operationID: crypto.randomUUID(),
        account,
        amount: 5,
        expectedVersion: null,
      });
      expect(created['resultType']).toBe('task');
      expect(
        await dave.until(String(created['taskId']), (x) => x.status === 'input_required'),
      ).toMatchObject({ status: 'input_required' });
      const taskId = String(created['taskId']);
      for (let round = 0; round < 3; round++) {
        const t = await dave.until(
          taskId,
          (x) => x.status === 'input_required' || x.status === 'completed',
        );
        if (t.status !== 'input_required') break;
        await decide(B, approvalOf(t), 'approve', { scope: 'once' });
        await dave.until(taskId, (x) => x.status !== 'input_required');
      }
      const done = await dave.until(taskId);
      expect(done.status, JSON.stringify(done)).toBe('completed');
      expect(done.result?.['isError'], JSON.stringify(done.result)).toBeFalsy();
      expect(JSON.stringify(done.result)).toMatch(/committedVersion/);
      // The write ran once: one entry, version 1.
      expect(toolJson(await read(account))).toMatchObject({ version: 1, entries: [{ amount: 5 }] });
    });

    it("denied, the approval task fails with approvalDenied and the owner's reason, and nothing ran", async () => {
      const dave = await as('dave', 'B');
      const account = `denied-${Date.now()}`;
      const created = await dave.create('ledger_append', {
        operationID: crypto.randomUUID(),
        account,
        amount: 7,
        expectedVersion: null,
      });
      const taskId = String(created['taskId']);
      let t = await dave.until(taskId, (x) => x.status === 'input_required');
      // A consent card may come first: approve it, then deny the policy ask.
      let id = approvalOf(t);
      const first = (await (
        await fetch(`${A.base}/api/v1/approvals`, { headers: owner })
      ).json()) as {
        approvals: { id: string; kind: string }[];
      };
      if (first.approvals.find((a) => a.id === id)?.kind === 'consent') {
        await decide(A, id, 'approve', {});
        t = await dave.until(taskId, (x) => x.status === 'input_required' && approvalOf(x) !== id);
        id = approvalOf(t);
      }
      await decide(A, id, 'deny', { reason: 'not this account' });
      const done = await dave.until(taskId);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({
        data: { code: 'approvalDenied', approvalID: id, reason: 'not this account' },
      });
      expect(toolJson(await read(account))).toMatchObject({ code: 'notFound' });
    });
    it('cancelled by the agent, the task withdraws its ask: it leaves the inbox and a decision on it says it was withdrawn', async () => {
      const dave = await as('dave', 'A');
      const created = await dave.create('ledger_append', {
        operationID: crypto.randomUUID(),
        account: `cancelled-${Date.now()}`,
        amount: 3,
        expectedVersion: null,
      });
      const taskId = String(created['taskId']);
      const id = approvalOf(await dave.until(taskId, (x) => x.status === 'input_required'));
      const pending = async () =>
        (
          (await (await fetch(`${B.base}/api/v1/approvals`, { headers: owner })).json()) as {
            approvals: { id: string }[];
          }
        ).approvals.map((a) => a.id);
      expect(await pending()).toContain(id);
      await dave.cancel(taskId);
      await waitFor(async () => !(await pending()).includes(id));
      const late = await fetch(`${B.base}/api/v1/approvals/${id}/approve`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ scope: 'once' }),
      });
      expect(late.status).toBe(400);
      expect(((await late.json()) as { message: string }).message).toBe(
        `Request ${id} was withdrawn (the agent cancelled its task); nothing was approved.`,
      );
    });

    it('an ask that expires undecided fails its task (expired), and nothing ran', async () => {
      const dave = await as('dave', 'A');
      const account = `expired-${Date.now()}`;
      const created = await dave.create('ledger_append', {
        operationID: crypto.randomUUID(),
        account,
        amount: 9,
        expectedVersion: null,
      });
      const taskId = String(created['taskId']);
      const id = approvalOf(await dave.until(taskId, (x) => x.status === 'input_required'));
      // The owner's 15 minutes pass: the ask was made 16 minutes ago.
      const db = new pg.Client({ connectionString: PG_URL });
      await db.connect();
      try {
        await db.query(
          `UPDATE "${schema}".approvals SET created_at = created_at - 16 * 60 * 1000 WHERE id = $1`,
          [id],
        );
      } finally {
        await db.end();
      }
      const done = await dave.until(taskId);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ data: { reason: 'expired', approvalID: id } });
      expect(toolJson(await read(account))).toMatchObject({ code: 'notFound' });
    });
  });
});
