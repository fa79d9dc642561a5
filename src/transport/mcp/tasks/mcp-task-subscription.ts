/**
 * The wire of a `subscriptions/listen` with `notifications.taskIds`
 * (2026-07-28; SEP-2575 with SEP-2663 "Task Status Notifications"), shared
 * by the streamable HTTP entry (mcp-task-listen.ts) and the stdio entry
 * (mcp-task-listen-stdio.ts): which listen asks for tasks, why one is
 * refused, and the messages it is answered with. Every message a listen
 * sends carries the subscription id (the listen request's id) in `_meta`.
 */
import { z } from 'zod';
import {
  CLIENT_CAPABILITIES_META_KEY,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import { missingTasksExtension, TASKS_EXTENSION } from './mcp-tasks.js';
import { SERVER_INFO } from '../mcp-server.js';
import type { TaskView } from './mcp-task-store.js';
import { isObject } from '../../../kernel/index.js';

/** The protocol revisions whose task listens Airlock serves (others are left to the SDK, which refuses them). */
export const TASK_LISTEN_REVISIONS: ReadonlySet<string> = new Set(['2026-07-28']);

/** A refused listen's JSON-RPC error. */
export interface ListenRefusal {
  code: number;
  message: string;
  data?: unknown;
}

export type TaskListenRequest =
  | {
      ok: true;
      id: unknown;
      taskIds: string[];
      /** The other fields of the filter (the list-changed ones). */
      requested: Record<string, unknown>;
    }
  | { ok: false; id: unknown; refusal: ListenRefusal };

/** True for a `subscriptions/listen` request whose filter names `taskIds` (well-formed or not). */
export function asksForTasks(message: unknown): boolean {
  if (!isObject(message) || message.method !== 'subscriptions/listen' || !('id' in message))
    return false;
  const params = message.params;
  return isObject(params) && isObject(params.notifications) && 'taskIds' in params.notifications;
}

/** The request's id, the task ids and the other fields asked for, or why it is refused. */
export function readTaskListen(message: unknown, maxTaskIds: number): TaskListenRequest {
  const Params = z.looseObject({
    notifications: z.looseObject({
      taskIds: z
        .array(z.string().min(1).max(200))
        .max(
          maxTaskIds,
          `at most ${maxTaskIds} taskIds per listen; split them over several listens`,
        ),
    }),
    _meta: z.record(z.string(), z.unknown()).optional(),
  });
  const { id, params } = message as { id: unknown; params: unknown };
  const parsed = Params.safeParse(params);
  if (!parsed.success) {
    const message = `Invalid params: notifications.taskIds must list task ids: ${parsed.error.issues[0]?.message ?? 'malformed'}.`;
    return { ok: false, id, refusal: { code: -32602, message } };
  }
  const declared = parsed.data._meta?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  if (declared?.extensions?.[TASKS_EXTENSION] === undefined) {
    const { code, message, data } = missingTasksExtension('subscriptions/listen with taskIds');
    return { ok: false, id, refusal: { code, message, data } };
  }
  const { taskIds, ...requested } = parsed.data.notifications;
  return { ok: true, id, taskIds, requested };
}

/** The refusal of a listen beyond the open task listens one agent may hold. */
export const tooManyListens = (max: number): ListenRefusal => ({
  code: -32000,
  message: `Too many open subscriptions/listen streams with taskIds for this agent (${max}); close one, or list more task ids in one listen, and retry.`,
});

/** The refusal of a listen whose tasks could not be read (the store failed). */
export const tasksUnreadable: ListenRefusal = {
  code: -32603,
  message: 'The tasks could not be read just now; listen again in a moment.',
};

/** `params` with the subscription id stamped in `_meta`. */
export function stamped(
  params: Record<string, unknown> | undefined,
  subscriptionId: unknown,
): Record<string, unknown> {
  const _meta = {
    ...(params?.['_meta'] as object | undefined),
    [SUBSCRIPTION_ID_META_KEY]: subscriptionId,
  };
  return { ...params, _meta };
}

/** The acknowledged filter: the honored list-changed fields and the tasks found for the caller. */
export const acknowledgedFilter = (changes: object, taskIds: readonly string[]) => ({
  notifications: { ...changes, taskIds: [...taskIds] },
});

/** A task's `notifications/tasks` params: its `DetailedTask`, as `tasks/get` answers it. */
export const taskParams = (view: TaskView): Record<string, unknown> => ({ ...view });

/** The empty listen result that ends a listen gracefully (SEP-2575). */
export function listenResult<Id>(subscriptionId: Id) {
  return {
    jsonrpc: '2.0' as const,
    id: subscriptionId,
    result: {
      resultType: 'complete',
      _meta: {
        [SUBSCRIPTION_ID_META_KEY]: subscriptionId,
        [SERVER_INFO_META_KEY]: SERVER_INFO,
      },
    },
  };
}
