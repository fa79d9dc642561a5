/**
 * The MCP task record (mcp-task-store.ts) on a real kernel and store: who
 * finds a task, how long it lives, and how its status follows the jobs
 * behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import {
  createTaskStore,
  TASK_TTL_MS,
  viewOf,
} from '../../src/transport/mcp/tasks/mcp-task-store.js';
import { legacyTaskNotifier } from '../../src/transport/mcp/tasks/mcp-tasks-2025.js';
import { waitFor } from '../helpers/wait.js';

let tk: TestKernel;
let clock = Date.now();
let tasks: ReturnType<typeof createTaskStore>;
const owner = { agent: 'alice', mount: 'ledger', tool: 'ledger_count' };

beforeAll(async () => {
  tk = await testKernel([]);
  tasks = createTaskStore(tk.kernel, () => clock);
});
afterAll(() => tk.dispose());

/**
 * A job alice's call started (a task follows only its own agent's jobs),
 * whose run waits for `finish` (the test decides how it ends).
 */
async function heldJob() {
  let finish!: (how: 'completed' | Error) => void;
  const ended = new Promise<'completed' | Error>((r) => (finish = r));
  const id = await tk.kernel.jobs.seenBy('alice').start({
    door: 'ledger',
    kind: 'held',
    run: async (job) => {
      job.progress({
        step: 'hold',
        currentUnit: 1,
        totalUnits: 4,
        currentStepIndex: 0,
        totalSteps: 1,
      });
      const how = await ended;
      if (how instanceof Error) throw how;
      return how;
    },
  });
  return { id, finish };
}

describe('ownership and lifetime', () => {
  it('a task is found by its own agent only', async () => {
    const task = await tasks.create(owner);
    expect((await tasks.find(task.taskId, 'alice'))?.status).toBe('working');
    expect(await tasks.find(task.taskId, 'bob')).toBeNull();
  });

  it('a task is readable for its ttl, then gone; the next create purges expired tasks', async () => {
    const task = await tasks.create(owner);
    clock += TASK_TTL_MS - 1;
    expect(await tasks.find(task.taskId, 'alice')).not.toBeNull();
    const older = await tasks.create(owner);
    clock += 2;
    expect(await tasks.find(task.taskId, 'alice')).toBeNull();
    expect(await tasks.read(task.taskId)).toBeNull();
    clock += TASK_TTL_MS;
    await tasks.create(owner);
    expect(await tasks.read(older.taskId)).toBeNull();
  });

  it('task ids sort by creation time, so the oldest are purged first', async () => {
    const first = await tasks.create(owner);
    clock += 1;
    const second = await tasks.create(owner);
    expect(first.taskId < second.taskId).toBe(true);
  });
});

describe('status from the jobs behind a task', () => {
  it('a task does not follow another agent’s job', async () => {
    const task = await tasks.create({ ...owner, agent: 'bob' });
    const job = await heldJob();
    await tasks.advance(task.taskId, { job: job.id });
    job.finish('completed');
    await waitFor(async () => (await tk.kernel.jobs.get(job.id))?.status === 'completed');
    const seen = await tasks.find(task.taskId, 'bob');
    expect(seen?.status).toBe('working');
    expect(seen?.statusMessage ?? '').not.toMatch(/hold/);
  });

  it('a task following a job shows its progress, then its outcome as the result', async () => {
    const task = await tasks.create(owner);
    const job = await heldJob();
    await tasks.advance(task.taskId, { job: job.id });
    await waitFor(async () =>
      /hold: 1\/4/.test((await tasks.find(task.taskId, 'alice'))?.statusMessage ?? ''),
    );
    job.finish('completed');
    await waitFor(async () => (await tasks.find(task.taskId, 'alice'))?.status === 'completed');
    const view = viewOf((await tasks.find(task.taskId, 'alice'))!, true);
    expect(view.result?.['structuredContent']).toMatchObject({
      jobId: job.id,
      status: 'completed',
    });
    expect(view).not.toHaveProperty('error');
  });

  it('a followed job that fails is a tool error (completed, isError), not a protocol failure', async () => {
    const task = await tasks.create(owner);
    const job = await heldJob();
    await tasks.advance(task.taskId, { job: job.id });
    job.finish(new Error('the engine broke'));
    await waitFor(async () => (await tasks.find(task.taskId, 'alice'))?.status === 'completed');
    const view = viewOf((await tasks.find(task.taskId, 'alice'))!, true);
    expect(view.result).toMatchObject({
      isError: true,
      structuredContent: { error: 'the engine broke' },
    });
  });

  it('a task whose runner ended without writing an outcome reads failed, with what to do next', async () => {
    const task = await tasks.create(owner);
    const runner = await heldJob();
    await tasks.advance(task.taskId, { runner: runner.id });
    runner.finish(new Error('interrupted'));
    await waitFor(async () => (await tasks.find(task.taskId, 'alice'))?.status === 'failed');
    const view = viewOf((await tasks.find(task.taskId, 'alice'))!, true);
    expect(view.error).toMatchObject({ code: -32603 });
    expect(view.error?.message).toMatch(/call ledger_count again/);
    expect(view).not.toHaveProperty('result');
  });

  it('a runner that hands its task to a job just before it ends is followed, not failed', async () => {
    const task = await tasks.create(owner);
    const runner = await heldJob();
    const started = await heldJob();
    await tasks.advance(task.taskId, { runner: runner.id });
    runner.finish('completed');
    await waitFor(async () => (await tk.kernel.jobs.get(runner.id))?.status === 'completed');
    // The hand-over lands between the task's read and the look-up of its runner.
    const jobs = {
      ...tk.kernel.jobs,
      get: async (id: string) => {
        if (id === runner.id) await tasks.advance(task.taskId, { job: started.id });
        return tk.kernel.jobs.get(id);
      },
    };
    const racing = createTaskStore(
      { store: tk.kernel.store, events: tk.kernel.events, jobs },
      () => clock,
    );
    expect((await racing.find(task.taskId, 'alice'))?.status).toBe('working');
    started.finish('completed');
    await waitFor(async () => (await tasks.find(task.taskId, 'alice'))?.status === 'completed');
  });

  it('a terminal task stays as it is: advance leaves it alone', async () => {
    const task = await tasks.create(owner);
    await tasks.advance(task.taskId, { status: 'cancelled' });
    await tasks.advance(task.taskId, { status: 'completed', result: { content: [] } });
    expect((await tasks.find(task.taskId, 'alice'))?.status).toBe('cancelled');
  });
});

describe('the 2025-era status notifications of a task', () => {
  it('a status the task reached before its watch first read it is told to the session that created it', async () => {
    const sent: { method: string; params: { taskId: string; status: string } }[] = [];
    // The session's server, as the notifier uses it: notifications out, closed at the end.
    const server = {
      notification: async (n: (typeof sent)[number]) => void sent.push(n),
      onclose: undefined as (() => void) | undefined,
    };
    const created = await tasks.create(owner);
    // The owner was asked before the watch began (a busy machine): the record says input_required.
    await tasks.advance(created.taskId, { status: 'input_required' });
    const notify = legacyTaskNotifier(server as never, tk.kernel, tasks);
    await notify(created);
    await waitFor(() => sent.length > 0);
    expect(sent.map((n) => [n.method, n.params.taskId, n.params.status])).toEqual([
      ['notifications/tasks/status', created.taskId, 'input_required'],
    ]);
    // Later changes still arrive.
    await tasks.advance(created.taskId, { status: 'working' });
    await waitFor(() => sent.length > 1);
    expect(sent[1]!.params.status).toBe('working');
    server.onclose?.();
  });
});
