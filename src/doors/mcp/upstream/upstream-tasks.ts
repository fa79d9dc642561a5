/**
 * Upstream tool calls as MCP tasks (2025-11-25 `tasks`: the upstream's
 * `tasks.requests.tools.call` capability and the tool's
 * `execution.taskSupport`). A journaled write to a tool that may run as a
 * task is sent as one; its task id is stored with the operation before
 * Airlock waits for the result (outcomes.ts), so whatever interrupts the
 * wait — the upstream dying, its connection breaking, Airlock killed — the
 * operation can be settled later from `tasks/get` and `tasks/result`
 * instead of staying uncertain. A tool whose `taskSupport` is `required` is
 * always called as a task (it refuses a plain call).
 */
import { z } from 'zod';
import { ProtocolError, specTypeSchemas } from '@modelcontextprotocol/client';
import type {
  CallToolResult,
  Client,
  ProgressNotification,
  RequestOptions,
  Tool,
} from '@modelcontextprotocol/client';

/** A `CreateTaskResult`, or a plain result from an upstream that ran the call at once. */
const CreatedOrResult = z.looseObject({ task: z.looseObject({ taskId: z.string() }).optional() });

function plainResult(value: unknown): CallToolResult {
  const checked = specTypeSchemas.CallToolResult['~standard'].validate(value);
  if ('issues' in checked && checked.issues)
    throw new ProtocolError(
      -32602,
      'The upstream answered a task call with neither a task nor a result',
    );
  return checked.value as CallToolResult;
}

/** How long the upstream is asked to keep a task and its result (the journal keeps receipts 24 h). */
export const TASK_TTL_MS = 24 * 60 * 60 * 1000;

/** Whether `tool` is called as a task on this connection: `required`, `optional`, or not at all. */
export function taskSupportOf(client: Client, tool: Tool): 'required' | 'optional' | null {
  const caps = client.getServerCapabilities() as
    { tasks?: { requests?: { tools?: { call?: unknown } } } } | undefined;
  if (caps?.tasks?.requests?.tools?.call === undefined) return null;
  const support = (tool as { execution?: { taskSupport?: unknown } }).execution?.taskSupport;
  return support === 'required' || support === 'optional' ? support : null;
}

export interface TaskCall {
  name: string;
  arguments: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/**
 * Sends `call` as a task, hands its id to `created` (which stores it) and
 * only then waits for the result with `tasks/result`. An upstream that
 * answers at once with a plain result (it ignored the task) is answered so.
 * On abort the upstream is asked to cancel the task (when it offers
 * `tasks/cancel`) before the abort goes on.
 */
export async function callAsTask(
  client: Client,
  call: TaskCall,
  options: RequestOptions,
  created: (taskId: string) => Promise<void>,
): Promise<CallToolResult> {
  const { onprogress, ...plain } = options;
  // The SDK drops its progress handler when the CreateTaskResult arrives; the task's progress
  // keeps the request's token for its whole life (2025-11-25), so the token is ours and routed here.
  const token = onprogress ? `airlock-task-${++lastToken}` : undefined;
  const routes = onprogress ? progressRoutes(client) : undefined;
  if (token && onprogress) routes!.set(token, onprogress);
  const meta = token ? { _meta: { ...call._meta, progressToken: token } } : {};
  try {
    const first = await client.request(
      { method: 'tools/call', params: { ...call, ...meta, task: { ttl: TASK_TTL_MS } } },
      CreatedOrResult,
      plain,
    );
    if (!first.task) return plainResult(first);
    const { taskId } = first.task;
    await created(taskId);
    const cancel = () => void cancelTask(client, taskId);
    plain.signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await taskResult(client, taskId, plain);
    } finally {
      plain.signal?.removeEventListener('abort', cancel);
    }
  } finally {
    if (token) routes!.delete(token);
  }
}

type OnProgress = NonNullable<RequestOptions['onprogress']>;

let lastToken = 0;
/** Per upstream client: the progress tokens of its calls run as tasks, and whom each reports to. */
const taskProgress = new WeakMap<Client, Map<string, OnProgress>>();

/**
 * The client's progress handler, installed once: a token of a call run as a
 * task goes to that call; any other goes on to the SDK's own handling (plain
 * calls' `onprogress`, keyed by request id).
 */
function progressRoutes(client: Client): Map<string, OnProgress> {
  const known = taskProgress.get(client);
  if (known) return known;
  const routes = new Map<string, OnProgress>();
  taskProgress.set(client, routes);
  const sdk = client as unknown as { _onprogress(n: ProgressNotification): void };
  client.setNotificationHandler('notifications/progress', (notification) => {
    const { progressToken, ...progress } = notification.params;
    const route = typeof progressToken === 'string' ? routes.get(progressToken) : undefined;
    if (route) route(progress);
    else sdk._onprogress(notification);
  });
  return routes;
}

/** The task's result (`tasks/result` waits until it ends), without the related-task mark the upstream adds. */
export async function taskResult(
  client: Client,
  taskId: string,
  options: RequestOptions = {},
): Promise<CallToolResult> {
  const result = (await client.request(
    { method: 'tasks/result', params: { taskId } },
    specTypeSchemas.CallToolResult,
    options,
  )) as CallToolResult;
  const meta = result._meta as Record<string, unknown> | undefined;
  if (!meta || !(RELATED_TASK in meta)) return result;
  const { [RELATED_TASK]: _related, ...rest } = meta;
  const { _meta: _dropped, ...plain } = result;
  return Object.keys(rest).length ? { ...plain, _meta: rest } : plain;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** `tasks/get`: the task's status; throws what the upstream answered (an unknown task is a protocol error). */
export async function taskStatus(client: Client, taskId: string): Promise<TaskStatus> {
  const task = await client.request(
    { method: 'tasks/get', params: { taskId } },
    specTypeSchemas.GetTaskResult,
    { timeout: 10_000 },
  );
  return task.status;
}

async function cancelTask(client: Client, taskId: string): Promise<void> {
  const caps = client.getServerCapabilities() as { tasks?: { cancel?: unknown } } | undefined;
  if (caps?.tasks?.cancel === undefined) return;
  await client
    .request({ method: 'tasks/cancel', params: { taskId } }, specTypeSchemas.CancelTaskResult, {
      timeout: 5_000,
    })
    .catch(() => undefined);
}
