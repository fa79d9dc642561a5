/**
 * The MCP tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on the
 * 2026-07-28 wire: a client that declares the extension in a request's
 * capabilities gets, for a tool its door offers as a task
 * (`McpSurface.tasks`), a `CreateTaskResult` at once instead of the result;
 * it follows the task with `tasks/get`, answers its input with
 * `tasks/update` and stops it with `tasks/cancel` — on any instance, since
 * tasks live in the shared store (mcp-task-store.ts) and run as kernel jobs
 * (mcp-task-runner.ts).
 *
 * The SDK (v2.4) has no server runtime for the extension: it routes
 * `tasks/get` and `tasks/cancel` to handlers registered with their own
 * schemas on the 2026 era, answers the removed `tasks/result` and
 * `tasks/list` with -32601 itself, and stamps `resultType`. A 2025-era
 * session's handshake cannot carry the extension: it gets the same tasks in
 * the 2025-11-25 shapes instead (mcp-tasks-2025.ts), through the same
 * methods registered here, answered by era.
 */
import { z } from 'zod';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError } from '@modelcontextprotocol/server';
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import {
  createTaskStore,
  isTerminal,
  TASKS_EXTENSION,
  viewOf,
  type TaskRecord,
  type TaskStore,
} from './mcp-task-store.js';
import { startTaskRunner } from './mcp-task-runner.js';
import {
  createTaskAnswer,
  isLegacyEra,
  legacyTaskMethods,
  legacyTaskNotifier,
} from './mcp-tasks-2025.js';
import { presentOutcome } from '../present.js';
import type { CallOptions } from '../../../kernel/calls/pipeline.js';
import { agentKeyOf } from '../../../kernel/connection.js';
import type { McpRequestScope, McpTaskSupport, ServingKernel } from '../../surface.js';

export { TASKS_EXTENSION } from './mcp-task-store.js';

/** -32021 Missing Required Client Capability (SEP-2575), naming the extension. */
export function missingTasksExtension(what: string): ProtocolError {
  return new ProtocolError(
    -32021,
    `${what} needs the ${TASKS_EXTENSION} extension: declare it under extensions in the request's client capabilities (_meta "${CLIENT_CAPABILITIES_META_KEY}") and send it again.`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** True when this request negotiated the tasks extension (2026-07-28 per-request capabilities only). */
export function tasksNegotiated(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return declared?.extensions?.[TASKS_EXTENSION] !== undefined;
}

const stores = new WeakMap<object, TaskStore>();
/** One task store per kernel, shared by every server instance of the workspace. */
export function taskStoreFor(kernel: ServingKernel): TaskStore {
  let store = stores.get(kernel);
  if (!store) stores.set(kernel, (store = createTaskStore(kernel)));
  return store;
}

const TaskId = z.string().min(1).max(200);
// The methods' params, built once: every session's server shares them (a zod
// schema per server cost each idle 2025-era session ~1.5 KB, issue #16).
const TaskParams = z.looseObject({ taskId: TaskId });
const UpdateParams = z.looseObject({
  taskId: TaskId,
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});
const unknownTask = (taskId: string) =>
  new ProtocolError(
    -32602,
    `No task ${taskId} for this agent: it never existed, it expired, or another agent created it. Call the tool again to start a new task.`,
  );

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` on `server` (and, for the
 * 2025 era, `tasks/result` and `tasks/list`). `agentOf` names the agent a
 * request acts as; a task is found only by its own agent.
 */
export function registerTaskMethods(
  server: Server,
  kernel: ServingKernel,
  agentOf: (ctx: ServerContext) => string,
): void {
  const tasks = taskStoreFor(kernel);
  const legacy = legacyTaskMethods(server, kernel, tasks, agentOf);
  const find = async (method: string, taskId: string, ctx: ServerContext) => {
    if (!tasksNegotiated(ctx)) throw missingTasksExtension(method);
    const task = await tasks.find(taskId, agentOf(ctx));
    if (!task) throw unknownTask(taskId);
    return task;
  };

  server.setRequestHandler('tasks/get', { params: TaskParams }, async ({ taskId }, ctx) =>
    isLegacyEra(ctx)
      ? legacy.get(taskId, ctx)
      : { ...viewOf(await find('tasks/get', taskId, ctx), true) },
  );

  server.setRequestHandler(
    'tasks/update',
    { params: UpdateParams },
    async ({ taskId, ...params }, ctx) => {
      await find('tasks/update', taskId, ctx);
      // The SDK lifts `inputResponses` out of the params of a 2026-era request.
      const inputResponses = params.inputResponses ?? ctx.mcpReq.inputResponses;
      if (!inputResponses || typeof inputResponses !== 'object')
        throw new ProtocolError(
          -32602,
          'tasks/update needs inputResponses: an object keyed by the ids in the task’s inputRequests.',
        );
      // Answers to requests the task is not waiting for are acknowledged and dropped.
      await tasks.update(taskId, (task) => {
        if (task.status !== 'input_required' || task.waitingFor !== 'input') return null;
        const pending = { ...task.inputRequests };
        const answered = { ...task.inputResponses };
        for (const [key, value] of Object.entries(inputResponses)) {
          if (!(key in pending)) continue;
          delete pending[key];
          answered[key] = value;
        }
        const done = Object.keys(pending).length === 0;
        return {
          ...task,
          inputRequests: pending,
          inputResponses: answered,
          ...(done ? { status: 'working' as const, statusMessage: undefined } : {}),
        };
      });
      return {};
    },
  );

  server.setRequestHandler('tasks/cancel', { params: TaskParams }, async ({ taskId }, ctx) => {
    if (isLegacyEra(ctx)) return legacy.cancel(taskId, ctx);
    const task = await find('tasks/cancel', taskId, ctx);
    if (!isTerminal(task.status)) await tasks.cancel(task);
    return {};
  });
}

export interface TaskToolCall {
  support: McpTaskSupport;
  mount: string;
  tool: string;
  args: Record<string, unknown>;
  connection: CallOptions['connection'];
  /** The request's scope as the door's `withMcpRequest` sees it. */
  scope: () => McpRequestScope;
  /** The owner's card for an approval, when the server knows its address. */
  link?: ((approvalId: string) => Promise<string | undefined>) | undefined;
}

/**
 * How a `tools/call` of a tool the door offers as a task is answered: a
 * `CreateTaskResult` when the request negotiated the extension (or the
 * tool's `inputFirst` round while input is missing), -32021 for a
 * required-task tool when it did not, null to run it as an ordinary call.
 */
export async function answerAsTask(
  kernel: ServingKernel,
  ctx: ServerContext,
  call: TaskToolCall,
): Promise<Record<string, unknown> | null> {
  const negotiated = tasksNegotiated(ctx);
  if (!negotiated && call.support.support === 'required')
    throw missingTasksExtension(`The tool '${call.tool}' runs only as a task: tools/call`);
  if (!negotiated) return null;
  const scope = call.scope();
  const first = call.support.inputFirst?.(scope);
  if (first) return first;
  const task = await startCallTask(kernel, ctx, call, scope);
  return { resultType: 'task', ...viewOf(task, false) };
}

/** A tool offered as an ordinary call: as a task only while the owner's approval is pending. */
const NOT_A_TASK_TOOL: McpTaskSupport = { support: 'optional' };

/**
 * Long approvals as tasks (issue 30): a `tools/call` that answered
 * `approvalRequired`, from a request that negotiated the extension, is
 * answered as a task in `input_required` with the card's link instead. The
 * task's runner waits for the owner, runs the call once approved (the kernel
 * uses the approval once) and completes with its result; denied, it
 * completes with the `approvalDenied` tool error and the owner's reason; the
 * ask expiring undecided fails it (`expired`). Null when the request did not
 * negotiate the extension: the caller answers `approvalRequired` as before.
 */
export async function answerApprovalAsTask(
  kernel: ServingKernel,
  ctx: ServerContext,
  call: Omit<TaskToolCall, 'support'>,
  approvalId: string,
): Promise<Record<string, unknown> | null> {
  if (!tasksNegotiated(ctx)) return null;
  const task = await startCallTask(
    kernel,
    ctx,
    { ...call, support: NOT_A_TASK_TOOL },
    call.scope(),
    { awaiting: approvalId },
  );
  return { resultType: 'task', ...viewOf(task, false) };
}

const notifiers = new WeakMap<Server, (task: TaskRecord) => Promise<void>>();

/**
 * A 2025-era `tools/call` with `params.task` (the 2025-11-25 tasks): the
 * call runs as a task whatever it needs, and answers its `CreateTaskResult`
 * at once; a policy ask makes the task wait in `input_required` for the
 * owner (mcp-tasks-2025.ts shows the card). The session is told of the
 * task's status changes (`notifications/tasks/status`).
 */
export async function answerAsLegacyTask(
  kernel: ServingKernel,
  server: Server,
  ctx: ServerContext,
  call: Omit<TaskToolCall, 'support'> & { support: McpTaskSupport | undefined },
): Promise<Record<string, unknown>> {
  // The door's task form, if any, for the job its tool starts; no input-first rounds here.
  const jobOf = call.support?.jobOf;
  const support: McpTaskSupport = { support: 'optional', ...(jobOf ? { jobOf } : {}) };
  const task = await startCallTask(kernel, ctx, { ...call, support }, call.scope(), {
    legacy: true,
  });
  let notify = notifiers.get(server);
  if (!notify)
    notifiers.set(server, (notify = legacyTaskNotifier(server, kernel, taskStoreFor(kernel))));
  await notify(task).catch(() => undefined);
  return createTaskAnswer(task) as Record<string, unknown>;
}

async function startCallTask(
  kernel: ServingKernel,
  ctx: ServerContext,
  call: TaskToolCall,
  scope: McpRequestScope,
  options: { awaiting?: string; legacy?: boolean } = {},
): Promise<TaskRecord> {
  const host = ctx.http?.req?.headers.get('host');
  const door = kernel.door(call.mount)?.mcp;
  const toolDef = kernel.tool(call.mount, call.tool);
  const tasks = taskStoreFor(kernel);
  const agent = agentKeyOf(call.connection) ?? call.connection.id;
  const task = await tasks.create({ agent, mount: call.mount, tool: call.tool });
  // Mid-call requests to the client belong to the request, long answered when a round runs.
  const { client: _answered, ...lasting } = scope;
  await startTaskRunner(kernel, tasks, {
    task,
    support: call.support,
    first: { inputResponses: scope.inputResponses, requestState: scope.requestState },
    ...(options.awaiting ? { awaiting: options.awaiting } : {}),
    ...(options.legacy ? { legacy: true } : {}),
    origin: host ? `http://${host}` : undefined,
    link: call.link,
    async run(round, signal, progress) {
      const once = () =>
        kernel.call(call.mount, call.tool, call.args, {
          connection: call.connection,
          signal,
          progress,
        });
      // The request is long answered: each round has its own input and no log channel.
      const roundScope: McpRequestScope = {
        ...lasting,
        inputResponses: round.inputResponses,
        requestState: round.requestState,
        log: async () => undefined,
        closeStream: undefined,
      };
      const outcome = await (door?.withMcpRequest ? door.withMcpRequest(roundScope, once) : once());
      return { outcome, presented: presentOutcome(door?.presenter, toolDef ?? call.tool, outcome) };
    },
  });
  // Answered only now that the task is durably in the store: a tasks/get right after finds it.
  return task;
}
