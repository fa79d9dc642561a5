/**
 * Task status notifications (SEP-2663 `notifications/tasks` on a SEP-2575
 * `subscriptions/listen`) over real stdio: `airlock stdio --doors ledger`
 * (the built CLI), a 2026-07-28 SDK client that starts the tasks, and raw
 * listens on the same pipe. The agent is `stdio:<clientInfo.name>` of each
 * request, so a listen naming another client is another agent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, testEnv } from '../helpers/cli.js';
import { taskClient, type TaskClient, type TaskView } from '../helpers/mcp-tasks.js';
import {
  listenOver,
  taskNotes,
  withoutMeta,
  type Listen,
  type ListenOptions,
} from '../helpers/mcp-listen.js';

const CLIENT = 'stdio-listen';
const SUBSCRIPTION = 'io.modelcontextprotocol/subscriptionId';

let dir: string;
let transport: StdioClientTransport;
let tasks: TaskClient;
const listens: Listen[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-task-listen-stdio-'));
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'stdio', '--doors', 'ledger', '--data', dir],
    env: testEnv() as Record<string, string>,
    stderr: 'pipe',
  });
  tasks = await taskClient(transport, { name: CLIENT });
});

afterAll(async () => {
  for (const l of listens) l.close();
  await tasks?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function open(notifications: Record<string, unknown>, options: ListenOptions = {}) {
  const l = await listenOver(transport, notifications, { clientName: CLIENT, ...options });
  listens.push(l);
  return l;
}

/** What tasks/get answers, as a notification carries it (no resultType, no _meta). */
const asNotified = (task: TaskView) => {
  const {
    resultType: _r,
    _meta: _m,
    ...rest
  } = task as TaskView & { resultType?: unknown; _meta?: unknown };
  return rest;
};
const methods = (l: Listen) => l.messages.map((m) => m.method ?? 'result');

it('over stdio a listen for a running task is acknowledged with its id, then notified working and, at the end, exactly what tasks/get answers', async () => {
  const { taskId } = (await tasks.create('ledger_count', { to: 40 })) as { taskId: string };
  const l = await open({ taskIds: [taskId] }, { id: 'L-run' });
  await l.ended;
  expect(l.messages[0]).toEqual({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { notifications: { taskIds: [taskId] }, _meta: { [SUBSCRIPTION]: 'L-run' } },
  });
  const notes = taskNotes(l.messages, taskId);
  expect(notes.map((n) => n.params?.['status'])).toEqual(['working', 'completed']);
  for (const n of notes) expect(n.params?._meta).toEqual({ [SUBSCRIPTION]: 'L-run' });
  expect(withoutMeta(notes.at(-1)!.params)).toEqual(asNotified(await tasks.get(taskId)));
  expect(methods(l)).toEqual([
    'notifications/subscriptions/acknowledged',
    'notifications/tasks',
    'notifications/tasks',
    'result',
  ]);
  expect(l.messages.at(-1)).toMatchObject({
    id: 'L-run',
    result: { resultType: 'complete', _meta: { [SUBSCRIPTION]: 'L-run' } },
  });
});

it('over stdio a task already completed when the listen opens is sent once, in its terminal state, right after the ack', async () => {
  const { taskId } = (await tasks.create('ledger_count', { to: 2 })) as { taskId: string };
  const done = await tasks.until(taskId);
  expect(done.status).toBe('completed');
  const l = await open({ taskIds: [taskId] }, { id: 'L-done' });
  await l.ended;
  expect(methods(l)).toEqual([
    'notifications/subscriptions/acknowledged',
    'notifications/tasks',
    'result',
  ]);
  expect(withoutMeta(l.messages[1]!.params)).toEqual(asNotified(done));
});

it('over stdio an unknown id is not acknowledged, nor a task of another client name (another agent)', async () => {
  const { taskId } = (await tasks.create('ledger_count', { to: 2 })) as { taskId: string };
  const mine = await open({ taskIds: ['no-such-task', taskId] }, { id: 'L-mine' });
  await mine.ended;
  expect(mine.messages[0]!.params?.['notifications']).toEqual({ taskIds: [taskId] });
  const theirs = await open({ taskIds: [taskId] }, { id: 'L-theirs', clientName: 'someone' });
  await theirs.ended;
  expect(theirs.messages[0]!.params?.['notifications']).toEqual({ taskIds: [] });
  expect(methods(theirs)).toEqual(['notifications/subscriptions/acknowledged', 'result']);
});

it('over stdio a listen asking for taskIds without declaring the extension answers -32021 naming it', async () => {
  const l = await open({ taskIds: ['anything'] }, { id: 'L-noext', extension: false });
  await l.ended;
  expect(l.messages).toEqual([
    {
      jsonrpc: '2.0',
      id: 'L-noext',
      error: {
        code: -32021,
        message: expect.stringMatching(/declare it under extensions/),
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      },
    },
  ]);
});

it('over stdio more than 100 taskIds in one listen answers -32602, saying to split them', async () => {
  const ids = Array.from({ length: 101 }, (_, i) => `t-${i}`);
  const l = await open({ taskIds: ids }, { id: 'L-many' });
  await l.ended;
  expect(l.messages[0]?.error).toMatchObject({
    code: -32602,
    message: expect.stringMatching(/at most 100 taskIds per listen; split them/),
  });
});

it('over stdio a cancelled listen hears nothing more of its task', async () => {
  const { taskId } = (await tasks.create('ledger_count', { to: 10_000 })) as { taskId: string };
  const l = await open({ taskIds: [taskId] }, { id: 'L-cancel' });
  await l.until((m) => m.length >= 2);
  l.close();
  await tasks.cancel(taskId);
  // A second listen sees the cancellation: the first one, cancelled before it, must not.
  const after = await open({ taskIds: [taskId] }, { id: 'L-after' });
  await after.ended;
  expect(taskNotes(after.messages, taskId).at(-1)?.params?.['status']).toBe('cancelled');
  expect(methods(l)).toEqual(['notifications/subscriptions/acknowledged', 'notifications/tasks']);
});
