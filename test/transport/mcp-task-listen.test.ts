/**
 * Task status notifications (SEP-2663 `notifications/tasks` on a SEP-2575
 * `subscriptions/listen` stream) over real HTTP, on two instances that share
 * one PostgreSQL store and one event bus (in process, as in
 * mcp-tasks.test.ts; the Redis-carried bus runs in test/cluster): the ack
 * lists only the caller's own tasks; each task's state follows as
 * `tasks/get` would answer it, on whichever instance runs the task; the
 * extension must be declared.
 */
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { createKernel } from '../../src/kernel/kernel.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { openStore } from '../../src/store/open.js';
import type { ServedDoor, ServingKernel } from '../../src/transport/surface.js';
import type { Store } from '../../src/kernel/store.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { httpTaskClient, type TaskClient, type TaskView } from '../helpers/mcp-tasks.js';
import { listen, taskNotes, withoutMeta, type Listen } from '../helpers/mcp-listen.js';

const policy = { rules: [{ tool: 'ledger_count', agent: 'carol', decision: 'ask' as const }] };
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

interface Instance {
  kernel: ServingKernel;
  store: Store;
  app: HttpApp;
  mcp: string;
  base: string;
}
const schema = uniqueSchema('tasklisten');
let bus: EventBus;
let A: Instance;
let B: Instance;
let owner: Record<string, string>;
const tokens: Record<string, string> = {};
const clients: TaskClient[] = [];
const listens: Listen[] = [];

/** The ledger door, declaring tools.listChanged so a listen may combine it with tasks. */
function ledgerDoor(): ServedDoor {
  const door = createLedgerDoor();
  return { ...door, mcp: { ...door.mcp, capabilities: { tools: { listChanged: true } } } };
}

async function instance(events: EventBus): Promise<Instance> {
  const { store, blobs } = await openStore({ data: tmpdir(), store: `${PG_URL}?schema=${schema}` });
  const kernel = createKernel<ServedDoor>({ store, blobs, events, logger: silentLogger, policy });
  kernel.mount(ledgerDoor());
  await kernel.start();
  const app = createHttpApp({ kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  return { kernel, store, app, mcp: `${base}/mcp`, base };
}

async function as(agent: string, on: 'A' | 'B' = 'A') {
  const c = await httpTaskClient((on === 'A' ? A : B).mcp, tokens[agent]!, {
    name: `${agent}-${on}`,
  });
  clients.push(c);
  return c;
}

async function open(
  agent: string,
  on: 'A' | 'B',
  notifications: Record<string, unknown>,
  options: Parameters<typeof listen>[3] = {},
) {
  const l = await listen((on === 'A' ? A : B).mcp, tokens[agent]!, notifications, options);
  listens.push(l);
  return l;
}

/** What tasks/get answers, as a notification carries it (no resultType, no _meta). */
const asNotified = (task: TaskView) => {
  const {
    resultType: _r,
    _meta: _m,
    ...rest
  } = task as TaskView & {
    resultType?: unknown;
    _meta?: unknown;
  };
  return rest;
};
const terminal = (status: unknown) => ['completed', 'failed', 'cancelled'].includes(String(status));
const ended = (l: Listen) => l.messages.some((m) => 'result' in m || 'error' in m);

await describeWithPostgres('notifications/tasks on subscriptions/listen', () => {
  beforeAll(async () => {
    bus = await createEventBus();
    A = await instance(bus);
    B = await instance(bus);
    owner = await ownerHeaders(A.kernel);
    for (const name of ['alice', 'bob', 'carol'])
      tokens[name] = (await agentHeaders(A.kernel, name)).authorization!.replace('Bearer ', '');
  });

  afterAll(async () => {
    for (const l of listens) l.close();
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const i of [A, B]) {
      if (!i) continue;
      await i.app.close();
      await i.kernel.close();
      await i.store.close();
    }
    await bus?.close();
    await dropSchema(schema).catch(() => undefined);
  });

  it('a listen for a running task is acknowledged with its id, then notified working and, at the end, exactly what tasks/get answers', async () => {
    const alice = await as('alice');
    const { taskId } = (await alice.create('ledger_count', { to: 40 })) as { taskId: string };
    const l = await open('alice', 'A', { taskIds: [taskId] }, { id: 'L-run' });
    expect(l.status).toBe(200);
    await l.ended;
    const [ack, ...rest] = l.messages;
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUBSCRIPTION]: 'L-run' } },
    });
    const notes = taskNotes(l.messages, taskId);
    expect(notes.map((n) => n.params?.['status'])).toEqual(['working', 'completed']);
    for (const n of notes) expect(n.params?._meta).toEqual({ [SUBSCRIPTION]: 'L-run' });
    expect(withoutMeta(notes.at(-1)!.params)).toEqual(asNotified(await alice.get(taskId)));
    // Nothing else for a task (no progress, no log messages); the stream ends with the listen result.
    expect(rest.map((m) => m.method ?? 'result')).toEqual([
      'notifications/tasks',
      'notifications/tasks',
      'result',
    ]);
    expect(l.messages.at(-1)).toMatchObject({
      id: 'L-run',
      result: { resultType: 'complete', _meta: { [SUBSCRIPTION]: 'L-run' } },
    });
  });

  it('a task already completed when the listen opens is sent once, in its terminal state, right after the ack', async () => {
    const alice = await as('alice');
    const { taskId } = (await alice.create('ledger_count', { to: 2 })) as { taskId: string };
    const done = await alice.until(taskId);
    expect(done.status).toBe('completed');
    const l = await open('alice', 'B', { taskIds: [taskId] });
    await l.ended;
    expect(l.messages.map((m) => m.method ?? 'result')).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
      'result',
    ]);
    expect(withoutMeta(l.messages[1]!.params)).toEqual(asNotified(done));
  });

  it('the listen on instance B follows a task instance A runs, through input_required while the owner decides', async () => {
    const carol = await as('carol', 'A');
    const { taskId } = (await carol.create('ledger_count', { to: 3 })) as { taskId: string };
    const l = await open('carol', 'B', { taskIds: [taskId] });
    const waiting = await l.until((m) =>
      taskNotes(m, taskId).some((n) => n.params?.['status'] === 'input_required'),
    );
    const asked = taskNotes(waiting, taskId).find(
      (n) => n.params?.['status'] === 'input_required',
    )!;
    const url = (asked.params?.['inputRequests'] as { approval: { params: { url: string } } })
      .approval.params.url;
    const approvalId = decodeURIComponent(url.split('/#/approvals/')[1]!);
    const approved = await fetch(`${A.base}/api/v1/approvals/${approvalId}/approve`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'once' }),
    });
    expect(approved.status).toBe(200);
    await l.ended;
    const statuses = taskNotes(l.messages, taskId).map((n) => n.params?.['status']);
    // The first state is the one at the ack (working, or already input_required).
    expect(statuses.slice(statuses.indexOf('input_required'))).toEqual([
      'input_required',
      'working',
      'completed',
    ]);
    const last = taskNotes(l.messages, taskId).at(-1)!;
    expect(withoutMeta(last.params)).toEqual(asNotified(await carol.get(taskId)));
  });

  it('another agent’s task and an unknown id are not acknowledged and never notified', async () => {
    const alice = await as('alice');
    const bob = await as('bob', 'B');
    const theirs = String((await alice.create('ledger_count', { to: 30 }))['taskId']);
    const mine = String((await bob.create('ledger_count', { to: 30 }))['taskId']);
    const l = await open('bob', 'B', { taskIds: [theirs, 'no-such-task', mine] });
    await l.ended;
    expect(l.messages[0]!.params?.['notifications']).toEqual({ taskIds: [mine] });
    expect(taskNotes(l.messages, theirs)).toEqual([]);
    expect(taskNotes(l.messages, mine).at(-1)?.params?.['status']).toBe('completed');
    expect(JSON.stringify(l.messages)).not.toContain(theirs);
    expect(terminal((await alice.until(theirs)).status)).toBe(true);
  });

  it('a listen asking for taskIds without declaring the extension answers -32021 naming it', async () => {
    const l = await open('alice', 'A', { taskIds: ['anything'] }, { extension: false });
    await l.ended;
    expect(l.status).toBe(400);
    expect(l.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'listen-1',
        error: {
          code: -32021,
          message: expect.stringMatching(/declare it under extensions/),
          data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
        },
      },
    ]);
  });

  it('more than 100 taskIds in one listen answers -32602, saying to split them', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => `t-${i}`);
    const l = await open('alice', 'A', { taskIds: ids });
    await l.ended;
    expect(l.messages[0]?.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/at most 100 taskIds per listen; split them/),
    });
  });

  it('an agent may hold 8 task listens open on an instance; the 9th answers 429 until one closes', async () => {
    const alice = await as('alice');
    const { taskId } = (await alice.create('ledger_count', { to: 10_000 })) as { taskId: string };
    const held: Listen[] = [];
    for (let i = 0; i < 8; i++) {
      const l = await open('alice', 'A', { taskIds: [taskId] }, { id: i });
      await l.until((m) => m.length >= 2);
      held.push(l);
    }
    const refused = await open('alice', 'A', { taskIds: [taskId] }, { id: 8 });
    await refused.ended;
    expect(refused.status).toBe(429);
    expect(refused.messages[0]?.error).toMatchObject({
      code: -32000,
      message: expect.stringMatching(/close one/),
    });
    // Another agent is not held back by alice's listens.
    const bob = await as('bob');
    const own = String((await bob.create('ledger_count', { to: 10_000 }))['taskId']);
    const bobs = await open('bob', 'A', { taskIds: [own] });
    await bobs.until((m) => m.length >= 2);
    held[0]!.close();
    await held[0]!.ended;
    let again: Listen | undefined;
    for (let tries = 0; tries < 20 && again?.status !== 200; tries++) {
      again = await open('alice', 'A', { taskIds: [taskId] }, { id: 9 });
      if (again.status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(again?.status).toBe(200);
    await alice.cancel(taskId);
    await bob.cancel(own);
    for (const l of [...held.slice(1), again!, bobs]) await l.ended;
    expect(taskNotes(again!.messages, taskId).at(-1)?.params?.['status']).toBe('cancelled');
  });

  it('a listen without taskIds stays the SDK’s, and hears of a door’s tools changing on another instance', async () => {
    const l = await open('bob', 'B', { toolsListChanged: true }, { id: 'sdk' });
    await l.until((m) => m.length >= 1);
    expect(l.messages[0]?.params?.['notifications']).toEqual({ toolsListChanged: true });
    A.kernel.events.publish({ event: 'toolsChanged', door: 'ledger' });
    await l.until((m) => m.some((x) => x.method === 'notifications/tools/list_changed'));
    l.close();
  });

  it('list changes the listen also asked for arrive on the same stream, with the task notifications', async () => {
    const alice = await as('alice');
    const { taskId } = (await alice.create('ledger_count', { to: 10_000 })) as { taskId: string };
    const l = await open('alice', 'B', { taskIds: [taskId], toolsListChanged: true });
    await l.until((m) => m.length >= 2);
    expect(l.messages[0]!.params?.['notifications']).toEqual({
      toolsListChanged: true,
      taskIds: [taskId],
    });
    // A door's tools changed (on instance A): the kernel event reaches B over the bus.
    A.kernel.events.publish({ event: 'toolsChanged', door: 'ledger' });
    await l.until((m) => m.some((x) => x.method === 'notifications/tools/list_changed'));
    await alice.cancel(taskId);
    await l.until((m) => taskNotes(m, taskId).some((n) => terminal(n.params?.['status'])));
    // Still open: the list changes go on after the task ended.
    expect(ended(l)).toBe(false);
    expect(l.messages.find((m) => m.method === 'notifications/tools/list_changed')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { [SUBSCRIPTION]: 'listen-1' } },
    });
    l.close();
  });
});
