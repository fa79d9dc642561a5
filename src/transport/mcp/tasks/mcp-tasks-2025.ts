/**
 * MCP tasks on the 2025-11-25 wire (that revision's experimental `tasks`
 * utility), for 2025-era sessions (HTTP and stdio). The same tasks as the
 * 2026-07-28 extension's (mcp-tasks.ts): kept in the store
 * (mcp-task-store.ts), run by the same runner (mcp-task-runner.ts), only
 * shown in the older shapes (the SDK's `Task`, `CreateTaskResult`,
 * `GetTaskResult`, `ListTasksResult`, `CancelTaskResult`):
 *
 * - the server declares `capabilities.tasks` (`list`, `cancel`,
 *   `requests.tools.call`) at `initialize`; a `tools/call` with
 *   `params.task` answers a `CreateTaskResult` at once;
 * - `tasks/get`, `tasks/list`, `tasks/cancel` answer from the store, on any
 *   instance; a task the owner must approve is `input_required`;
 * - `tasks/result` waits until the task is terminal and answers what the
 *   call would have answered (its result, or its JSON-RPC error); while the
 *   task waits for the owner, it sends the client a URL elicitation to the
 *   card, related to the task (`_meta` `io.modelcontextprotocol/related-task`,
 *   `elicitationId` = the approval id), and `notifications/elicitation/complete`
 *   once the owner decided;
 * - the session that created a task is sent `notifications/tasks/status` on
 *   each change of its status (its GET stream), while it lives on that instance.
 *
 * A tool call whose result is an error (`isError`) is a `failed` task here,
 * as the 2025-11-25 revision says; its `tasks/result` is that result.
 */
import {
  ProtocolError,
  RELATED_TASK_META_KEY,
  type CreateTaskResult,
  type ListTasksResult,
  type Result,
  type Server,
  type ServerCapabilities,
  type ServerContext,
  type Task,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import {
  isTerminal,
  viewOf,
  type TaskRecord,
  type TaskStore,
  type TaskView,
} from './mcp-task-store.js';
import { watchTasks, type TaskWatch } from './mcp-task-watch.js';
import type { ServingKernel } from '../../surface.js';

/** What a 2025-era `initialize` answers under `capabilities.tasks`. */
export const LEGACY_TASKS_CAPABILITY: NonNullable<ServerCapabilities['tasks']> = {
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
};

/** Tasks per `tasks/list` page. */
export const TASKS_PAGE = 50;
/** How often `tasks/result` reads its task again when no event came. */
const RESULT_SWEEP_MS = 2_000;
/** The longest a client may leave the card's elicitation open before it is dropped. */
const ELICIT_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** True on a 2025-era session (no per-request envelope). */
export const isLegacyEra = (ctx: ServerContext) => ctx.mcpReq.envelope === undefined;

/** True for a 2025-era `tools/call` that asks to be a task (`params.task`). */
export function wantsLegacyTask(ctx: ServerContext, params: Record<string, unknown>): boolean {
  const task = params['task'];
  return isLegacyEra(ctx) && typeof task === 'object' && task !== null && !Array.isArray(task);
}

/** The 2025-11-25 `Task` of a task's view (tasks/get answers it detailed). */
export function legacyTask(view: TaskView): Task {
  // A tool's error result is a failed task in this revision.
  const toolError = view.status === 'completed' && view.result?.['isError'] === true;
  const statusMessage = toolError
    ? (firstText(view.result) ?? view.statusMessage)
    : view.status === 'failed'
      ? (view.error?.message ?? view.statusMessage)
      : view.statusMessage;
  return {
    taskId: view.taskId,
    status: toolError ? 'failed' : view.status,
    ...(statusMessage ? { statusMessage } : {}),
    createdAt: view.createdAt,
    lastUpdatedAt: view.lastUpdatedAt,
    ttl: view.ttlMs,
    pollInterval: view.pollIntervalMs,
  };
}

const firstText = (result: Record<string, unknown> | undefined) => {
  const content = result?.['content'];
  const first = Array.isArray(content) ? (content[0] as { text?: unknown } | undefined) : undefined;
  return typeof first?.text === 'string' ? first.text.slice(0, 500) : undefined;
};

const TaskIdParams = z.looseObject({ taskId: z.string().min(1).max(200) });
const ListParams = z.looseObject({ cursor: z.string().max(200).optional() });

const answers = new WeakSet<object>();
/** The `CreateTaskResult` a task-augmented `tools/call` answers. */
export function createTaskAnswer(task: TaskRecord): CreateTaskResult {
  const answer: CreateTaskResult = { task: legacyTask(viewOf(task, false)) };
  answers.add(answer);
  return answer;
}
/** True for an answer made by `createTaskAnswer` (the server passes it through as it is). */
export const isCreateTaskAnswer = (result: unknown) =>
  typeof result === 'object' && result !== null && answers.has(result);

const unknownTask = (taskId: string) =>
  new ProtocolError(
    -32602,
    `Failed to retrieve task: no task ${taskId} for this agent (it never existed, it expired, or another agent created it). Call the tool again to start a new one.`,
  );

/**
 * `tasks/result` and `tasks/list` (2025 era only: the 2026-07-28 wire has
 * neither, and the SDK refuses them there), and the 2025-era answers of
 * `tasks/get` and `tasks/cancel` (registered once for both eras by
 * mcp-tasks.ts, which calls `get` and `cancel`).
 */
export function legacyTaskMethods(
  server: Server,
  kernel: ServingKernel,
  tasks: TaskStore,
  agentOf: (ctx: ServerContext) => string,
) {
  const find = async (taskId: string, ctx: ServerContext) => {
    const task = await tasks.find(taskId, agentOf(ctx));
    if (!task) throw unknownTask(taskId);
    return task;
  };

  // The SDK types these two 2025-only methods no more; the params are checked as its wire schemas do.
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async ({ taskId }, ctx) =>
    taskResult(server, kernel, tasks, await find(taskId, ctx), ctx),
  );

  server.setRequestHandler(
    'tasks/list',
    { params: ListParams },
    async ({ cursor }, ctx): Promise<ListTasksResult> => {
      if (cursor !== undefined && !/^[0-9a-z]{10}-[0-9a-f-]{36}$/.test(cursor))
        throw new ProtocolError(
          -32602,
          `Unknown cursor '${cursor}'; call tasks/list without a cursor to start again.`,
        );
      const { tasks: page, more } = await tasks.list(agentOf(ctx), cursor, TASKS_PAGE);
      const last = page.at(-1);
      return {
        tasks: page.map((t) => legacyTask(viewOf(t, true))),
        ...(more && last ? { nextCursor: last.taskId } : {}),
      };
    },
  );

  return {
    get: async (taskId: string, ctx: ServerContext): Promise<Task> =>
      legacyTask(viewOf(await find(taskId, ctx), true)),
    async cancel(taskId: string, ctx: ServerContext): Promise<Task> {
      const task = await find(taskId, ctx);
      if (isTerminal(task.status))
        throw new ProtocolError(
          -32602,
          `Task ${taskId} is already ${task.status}; there is nothing to cancel.`,
        );
      const cancelled = (await tasks.cancel(task)) ?? (await find(taskId, ctx));
      return legacyTask(viewOf(cancelled, true));
    },
  };
}

/**
 * Waits until the task is terminal and answers what its call would have
 * answered. Meanwhile each approval it waits for is shown to the client as a
 * URL elicitation related to the task, and marked complete once decided.
 */
async function taskResult(
  server: Server,
  kernel: ServingKernel,
  tasks: TaskStore,
  first: TaskRecord,
  ctx: ServerContext,
): Promise<Result> {
  const { taskId, agent } = first;
  const signal = ctx.mcpReq.signal;
  const stop = new AbortController();
  const shown = new Set<string>();
  const related = { relatedRequestId: ctx.mcpReq.id };
  const completeShown = (except?: string) => {
    for (const id of shown) {
      if (id === except) continue;
      shown.delete(id);
      void server
        .createElicitationCompletionNotifier(id, related)()
        .catch(() => undefined);
    }
  };
  try {
    for (let task: TaskRecord | null = first; ; task = await tasks.find(taskId, agent)) {
      if (!task) throw unknownTask(taskId);
      const waiting = task.status === 'input_required' ? task.approvalId : undefined;
      // Decided (or withdrawn): the link the client may still show is done with.
      completeShown(waiting);
      if (isTerminal(task.status)) return payloadOf(task);
      const url = (task.inputRequests?.['approval'] as { params?: { url?: unknown } } | undefined)
        ?.params?.url;
      if (waiting && typeof url === 'string' && !shown.has(waiting)) {
        shown.add(waiting);
        // The client's answer is not the owner's decision: whatever it says, the wait goes on.
        void server
          .elicitInput(
            {
              mode: 'url',
              message: task.statusMessage ?? `The owner must approve request ${waiting}.`,
              url,
              elicitationId: waiting,
              _meta: { [RELATED_TASK_META_KEY]: { taskId } },
            },
            { ...related, signal: stop.signal, timeout: ELICIT_TIMEOUT_MS },
          )
          .catch(() => undefined);
      }
      await changed(kernel, task, signal, RESULT_SWEEP_MS);
      if (signal.aborted)
        throw new ProtocolError(-32800, 'tasks/result was cancelled; the task goes on.');
    }
  } finally {
    stop.abort();
  }
}

/** What the task's call answers: its result (related to the task), or its JSON-RPC error. */
function payloadOf(task: TaskRecord): Result {
  if (task.status === 'completed' && task.result) {
    const meta = task.result['_meta'] as Record<string, unknown> | undefined;
    return {
      ...task.result,
      _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
    } as Result;
  }
  if (task.status === 'failed') {
    const error = task.error ?? {
      code: -32603,
      message: task.statusMessage ?? `Task ${task.taskId} failed; call ${task.tool} again.`,
    };
    throw new ProtocolError(error.code, error.message, error.data);
  }
  throw new ProtocolError(
    -32603,
    `Task ${task.taskId} was cancelled (${task.statusMessage ?? 'by the client'}); call ${task.tool} again to start anew.`,
    { reason: 'cancelled' },
  );
}

/** Resolves when the task may have moved (its event, its jobs' end), after `ms`, or on abort. */
function changed(
  kernel: Pick<ServingKernel, 'events'>,
  task: TaskRecord,
  signal: AbortSignal,
  ms: number,
) {
  return new Promise<void>((resolve) => {
    const jobs = new Set([task.runner, task.job].filter((j): j is string => j !== null));
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = kernel.events.subscribe(
      ({ data }) => {
        if (data.event === 'taskChanged' ? data.taskId === task.taskId : jobs.has(String(data.id)))
          done();
      },
      { events: ['taskChanged', 'jobFinished'] },
    );
    if (signal.aborted) done();
    else signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Sends `notifications/tasks/status` to one 2025-era session for the tasks
 * it created, until each is terminal or the session's server closes.
 */
export function legacyTaskNotifier(server: Server, kernel: ServingKernel, tasks: TaskStore) {
  const watches = new Set<TaskWatch>();
  const previous = server.onclose;
  server.onclose = () => {
    for (const w of watches) w.stop();
    watches.clear();
    previous?.();
  };
  const tell = (view: TaskView) =>
    void server
      .notification({ method: 'notifications/tasks/status', params: legacyTask(view) })
      .catch(() => undefined);
  return async (task: TaskRecord) => {
    const watch: TaskWatch = await watchTasks({
      kernel,
      tasks,
      agent: task.agent,
      taskIds: [task.taskId],
      onView: tell,
      onIdle: () => {
        watch.stop();
        watches.delete(watch);
      },
    });
    watches.add(watch);
    // A status the task reached before the watch first read it (an ask, on a busy
    // machine) is told too: the creator was answered with the status of `task`.
    for (const view of watch.initial) if (view.status !== task.status) tell(view);
    watch.start();
  };
}
