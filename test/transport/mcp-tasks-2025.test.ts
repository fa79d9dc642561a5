/**
 * Long approvals as 2025-11-25 tasks (issue 30, the 2025-era half): a v1 SDK
 * client (`@modelcontextprotocol/sdk` 1.32, its experimental tasks API) on a
 * 2025-era session, against two instances sharing one PostgreSQL store and a
 * Redis bus. A `tools/call` with `task` that the owner's policy asks about
 * answers a `CreateTaskResult`; the task waits in `input_required`, and
 * `tasks/result` shows the card as a URL elicitation related to the task;
 * the owner decides on the other instance; the task ends as the call would.
 */
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { specTypeSchemas } from '@modelcontextprotocol/server';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { createKernel } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { openStore } from '../../src/store/open.js';
import { createRedisBusTransport } from '../../src/store/redis-bus.js';
import type { ServedDoor, ServingKernel } from '../../src/transport/surface.js';
import type { Store } from '../../src/kernel/store.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { waitFor } from '../helpers/wait.js';

const AGENTS = ['erin', 'frank', 'gus'];
const policy = {
  rules: AGENTS.flatMap((agent) => [
    { tool: 'ledger_append', agent, decision: 'ask' as const },
    { tool: 'ledger_echo', agent, decision: 'ask' as const },
  ]),
};

interface Instance {
  kernel: ServingKernel;
  store: Store;
  bus: EventBus;
  app: HttpApp;
  mcp: string;
  base: string;
}
const schema = uniqueSchema('mcptasks25');
const channel = `airlock:test:tasks25:${randomUUID()}`;
/** The simulated clock's lead over the real one (the kernels read it). */
let skew = 0;
let A: Instance;
let B: Instance;
let owner: Record<string, string>;
const tokens: Record<string, string> = {};
const closers: (() => Promise<unknown>)[] = [];

async function instance(): Promise<Instance> {
  const { store, blobs } = await openStore({ data: tmpdir(), store: `${PG_URL}?schema=${schema}` });
  const bus = await createEventBus({
    transport: createRedisBusTransport({ url: REDIS_URL, channel }),
  });
  const kernel = createKernel<ServedDoor>({
    store,
    blobs,
    events: bus,
    logger: silentLogger,
    policy,
    now: () => Date.now() + skew,
  });
  kernel.mount(createLedgerDoor());
  await kernel.start();
  const app = createHttpApp({ kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  return { kernel, store, bus, app, mcp: `${base}/mcp`, base };
}

interface TasksClient {
  client: V1Client;
  /** URL elicitations the server sent, in order. */
  elicited: ElicitRequest['params'][];
  /** `notifications/tasks/status` received: `taskId status`. */
  statuses: string[];
}

/** A v1 SDK client of `agent` on instance A or B, declaring tasks and URL elicitation. */
async function v1(agent: string, on: Instance, tasks = true): Promise<TasksClient> {
  const client = new V1Client(
    { name: `${agent}-v1`, version: '1.0.0' },
    {
      capabilities: {
        elicitation: { url: {} },
        ...(tasks ? { tasks: { list: {}, cancel: {} } } : {}),
      },
    },
  );
  const elicited: ElicitRequest['params'][] = [];
  const statuses: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    elicited.push(request.params);
    return { action: 'accept' };
  });
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
    statuses.push(`${n.params.taskId} ${n.params.status}`);
  });
  await client.connect(
    new V1Transport(new URL(on.mcp), {
      requestInit: { headers: { authorization: `Bearer ${tokens[agent]!}` } },
    }),
  );
  closers.push(() => client.close());
  return { client, elicited, statuses };
}

/** Calls `name` as a task (2025-11-25 `params.task`) and answers the CreateTaskResult. */
const createTask = (c: TasksClient, name: string, args: Record<string, unknown>) =>
  c.client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    CreateTaskResultSchema,
    { task: { ttl: 60_000 } },
  );

const getTask = (c: TasksClient, taskId: string) => c.client.experimental.tasks.getTask(taskId);

/** Polls tasks/get until `done` holds (default: a terminal status). */
async function until(
  c: TasksClient,
  taskId: string,
  done = (s: string) => ['completed', 'failed', 'cancelled'].includes(s),
) {
  let last = await getTask(c, taskId);
  await waitFor(async () => done((last = await getTask(c, taskId)).status), { timeoutMs: 15_000 });
  return last;
}

/** The approval a card URL names. */
const approvalIn = (url: string) => decodeURIComponent(url.split('/#/approvals/')[1]!);

/** Opens tasks/result in the background; resolves with the first card it elicits. */
async function cardOf(c: TasksClient, taskId: string) {
  const before = c.elicited.length;
  const result = c.client.experimental.tasks
    .getTaskResult(taskId, CallToolResultSchema, { timeout: 30_000 })
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error: error as { code: number; message: string; data?: unknown } }),
    );
  await waitFor(() => c.elicited.length > before, { timeoutMs: 15_000 });
  const card = c.elicited[before]!;
  return { card, approvalId: approvalIn((card as { url: string }).url), result };
}

async function decide(on: Instance, id: string, action: 'approve' | 'deny', body: unknown) {
  const r = await fetch(`${on.base}/api/v1/approvals/${id}/${action}`, {
    method: 'POST',
    headers: { ...owner, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(r.status, await r.clone().text()).toBe(200);
}

const inbox = async (on: Instance) =>
  (
    (await (await fetch(`${on.base}/api/v1/approvals`, { headers: owner })).json()) as {
      approvals: { id: string }[];
    }
  ).approvals.map((a) => a.id);

await describeWithServices(
  'MCP tasks on the 2025-11-25 wire (v1 SDK client), PostgreSQL and Redis',
  ['postgres', 'redis'],
  () => {
    beforeAll(async () => {
      A = await instance();
      B = await instance();
      owner = await ownerHeaders(A.kernel);
      for (const name of AGENTS)
        tokens[name] = (await agentHeaders(A.kernel, name)).authorization!.replace('Bearer ', '');
    });

    afterAll(async () => {
      for (const close of closers) await close().catch(() => undefined);
      for (const i of [A, B]) {
        if (!i) continue;
        await i.app.close();
        await i.kernel.close();
        await i.store.close();
        await i.bus.close();
      }
      await dropSchema(schema).catch(() => undefined);
    });

    describe('negotiation', () => {
      it('initialize declares tasks (list, cancel, tools/call) and tools/list offers a tasks client every tool as an optional task', async () => {
        const c = await v1('erin', A);
        expect(c.client.getServerCapabilities()?.tasks).toEqual({
          list: {},
          cancel: {},
          requests: { tools: { call: {} } },
        });
        const { tools } = await c.client.listTools();
        expect(tools.length).toBeGreaterThan(0);
        for (const t of tools) expect(t.execution, t.name).toEqual({ taskSupport: 'optional' });
      });

      it('a 2026-era client sees neither capabilities.tasks nor execution.taskSupport', async () => {
        const modern = await connectClient(A.mcp, { token: tokens['erin']!, pin: MODERN_PROTOCOL });
        closers.push(() => modern.close());
        expect(modern.getServerCapabilities()?.tasks).toBeUndefined();
        for (const t of (await modern.listTools()).tools) expect(t.execution).toBeUndefined();
      });

      it('a call without task keeps answering approvalRequired with the card link', async () => {
        const c = await v1('frank', A, false);
        // No URL elicitation for this one: its answer comes at once.
        const plain = new V1Client({ name: 'frank-plain', version: '1.0.0' });
        await plain.connect(
          new V1Transport(new URL(A.mcp), {
            requestInit: { headers: { authorization: `Bearer ${tokens['frank']!}` } },
          }),
        );
        closers.push(() => plain.close());
        const answered = await plain.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } });
        expect(answered.isError).toBe(true);
        expect(toolJson(answered)).toMatchObject({ code: 'approvalRequired' });
        expect(c.elicited).toEqual([]);
        // Nor does a client without tasks pay for execution.taskSupport in its tools/list.
        for (const t of (await plain.listTools()).tools) expect(t.execution).toBeUndefined();
      });
    });

    describe('an approval the owner gives on instance B, 10 minutes later', () => {
      it('callToolStream: task created, input_required with the card elicited (related to the task), approved on B, completes with the result; the write ran once', async () => {
        const c = await v1('erin', A);
        const account = `acct-${randomUUID()}`;
        // Write access first (a consent card), as a task too.
        const access = await createTask(c, 'ledger_request_write_access', {});
        const consent = await cardOf(c, access.task.taskId);
        await decide(B, consent.approvalId, 'approve', {});
        expect(JSON.stringify(await consent.result)).toMatch(/grantID/);

        const messages: { type: string; [k: string]: unknown }[] = [];
        const stream = c.client.experimental.tasks.callToolStream(
          {
            name: 'ledger_append',
            arguments: {
              operationID: randomUUID(),
              account,
              amount: 5,
              expectedVersion: null,
            },
          },
          CallToolResultSchema,
          { task: { ttl: 60_000 }, timeout: 30_000 },
        );
        const ran = (async () => {
          for await (const m of stream) messages.push(m as never);
        })();
        await waitFor(() => c.elicited.length > 1, { timeoutMs: 15_000 });
        const created = messages.find((m) => m.type === 'taskCreated')!.task as {
          taskId: string;
          status: string;
        };
        expect(created.status).toBe('working');
        // The SDK's own 2025-11-25 shapes: the CreateTaskResult's task and the tasks/get answer.
        expect(specTypeSchemas.Task['~standard'].validate(created)).not.toHaveProperty('issues');
        const waiting = await getTask(c, created.taskId);
        expect(waiting.status).toBe('input_required');
        expect(specTypeSchemas.GetTaskResult['~standard'].validate(waiting)).not.toHaveProperty(
          'issues',
        );
        const card = c.elicited[1] as {
          mode: string;
          url: string;
          elicitationId: string;
          _meta?: Record<string, unknown>;
        };
        expect(card).toMatchObject({
          mode: 'url',
          url: expect.stringMatching(/\/#\/approvals\//),
          _meta: { 'io.modelcontextprotocol/related-task': { taskId: created.taskId } },
        });
        expect(card.elicitationId).toBe(approvalIn(card.url));
        // The client's "accept" is no decision: the task still waits for the owner.
        expect((await getTask(c, created.taskId)).status).toBe('input_required');

        skew = 10 * 60 * 1000;
        try {
          await decide(B, card.elicitationId, 'approve', { scope: 'once' });
          await ran;
        } finally {
          // The simulated 10 minutes are this test's only (the task runner reads the real clock).
          skew = 0;
        }
        const result = messages.at(-1)!;
        expect(result.type, JSON.stringify(messages)).toBe('result');
        expect(JSON.stringify(result['result'])).toMatch(/committedVersion/);
        expect((result['result'] as { _meta?: unknown })._meta).toMatchObject({
          'io.modelcontextprotocol/related-task': { taskId: created.taskId },
        });
        expect((await getTask(c, created.taskId)).status).toBe('completed');
        // The write ran once: one entry, version 1.
        const read = await c.client.callTool({ name: 'ledger_read', arguments: { account } });
        expect(toolJson(read)).toMatchObject({ version: 1, entries: [{ amount: 5 }] });
        // Its session was told of each status (notifications/tasks/status).
        await waitFor(() => c.statuses.includes(`${created.taskId} completed`));
        expect(c.statuses).toContain(`${created.taskId} input_required`);
      });

      it('another session of the agent, on instance B, gets, lists and reads the result of a task created on A', async () => {
        const a = await v1('gus', A);
        const created = await createTask(a, 'ledger_echo', { text: 'far' });
        const { approvalId, result } = await cardOf(a, created.task.taskId);
        await decide(B, approvalId, 'approve', { scope: 'once' });
        expect(await result).toMatchObject({
          value: {
            content: [{ type: 'text', text: expect.stringMatching(/far/) }],
          },
        });
        const b = await v1('gus', B);
        expect((await getTask(b, created.task.taskId)).status).toBe('completed');
        const listed = await b.client.experimental.tasks.listTasks();
        expect(listed.tasks.map((t) => t.taskId)).toContain(created.task.taskId);
        // Another agent finds nothing of it.
        const other = await v1('frank', B);
        const refused = await getTask(other, created.task.taskId).catch(
          (e: unknown) => e as { code: number },
        );
        expect(refused).toMatchObject({ code: -32602 });
        const theirs = await other.client.experimental.tasks.listTasks();
        expect(theirs.tasks.map((t) => t.taskId)).not.toContain(created.task.taskId);
        expect(
          JSON.stringify(
            await b.client.experimental.tasks.getTaskResult(
              created.task.taskId,
              CallToolResultSchema,
            ),
          ),
        ).toMatch(/far/);
      });
    });

    describe('a call that needs no approval', () => {
      it('a job-starting tool as a task follows its job and completes with its outcome; a plain one completes at once', async () => {
        const c = await v1('gus', A);
        const job = await createTask(c, 'ledger_count', { to: 3 });
        const done = await until(c, job.task.taskId);
        expect(done.status).toBe('completed');
        const result = await c.client.experimental.tasks.getTaskResult(
          job.task.taskId,
          CallToolResultSchema,
        );
        expect(result.structuredContent).toMatchObject({ status: 'completed' });
        const read = await createTask(c, 'ledger_read', { account: 'nobody' });
        const answered = await c.client.experimental.tasks.getTaskResult(
          read.task.taskId,
          CallToolResultSchema,
        );
        // A tool error is a failed task in 2025-11-25; tasks/result is the result itself.
        expect(answered.isError).toBe(true);
        const failed = await getTask(c, read.task.taskId);
        expect(failed.status).toBe('failed');
        expect(failed.statusMessage).toMatch(/notFound/);
      });
    });

    describe('denied, expired, cancelled', () => {
      it("denied on B: the task fails with approvalDenied and the owner's reason", async () => {
        const c = await v1('frank', A);
        const created = await createTask(c, 'ledger_echo', { text: 'no' });
        const { approvalId, result } = await cardOf(c, created.task.taskId);
        await decide(B, approvalId, 'deny', { reason: 'not this one' });
        const failed = await result;
        expect(failed).toMatchObject({
          error: {
            data: { code: 'approvalDenied', approvalID: approvalId, reason: 'not this one' },
          },
        });
        const task = await until(c, created.task.taskId);
        expect(task.status).toBe('failed');
        expect(task.statusMessage).toMatch(/not this one/);
      });

      it('the ask expiring undecided fails the task (expired), and nothing ran', async () => {
        const c = await v1('frank', A);
        const created = await createTask(c, 'ledger_echo', { text: 'late' });
        const { approvalId, result } = await cardOf(c, created.task.taskId);
        // The owner's 15 minutes pass: the ask was made 16 minutes ago.
        const db = new pg.Client({ connectionString: PG_URL });
        await db.connect();
        try {
          await db.query(
            `UPDATE "${schema}".approvals SET created_at = created_at - 16 * 60 * 1000 WHERE id = $1`,
            [approvalId],
          );
        } finally {
          await db.end();
        }
        const task = await until(c, created.task.taskId);
        expect(task.status).toBe('failed');
        expect(task.statusMessage).toMatch(/expired/);
        expect(await result).toMatchObject({
          error: { data: { reason: 'expired', approvalID: approvalId } },
        });
      });

      it('tasks/cancel answers the cancelled task and takes its ask out of the inbox; a second cancel is refused', async () => {
        const c = await v1('frank', A);
        const created = await createTask(c, 'ledger_echo', { text: 'never' });
        const { approvalId } = await cardOf(c, created.task.taskId);
        expect(await inbox(B)).toContain(approvalId);
        const cancelled = await c.client.experimental.tasks.cancelTask(created.task.taskId);
        expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: 'cancelled' });
        await waitFor(async () => !(await inbox(B)).includes(approvalId));
        const again = await c.client.experimental.tasks
          .cancelTask(created.task.taskId)
          .catch((e: unknown) => e as { code: number });
        expect(again).toMatchObject({ code: -32602 });
      });
    });
  },
);
