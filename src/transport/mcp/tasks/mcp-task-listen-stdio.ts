/**
 * `subscriptions/listen` with `notifications.taskIds` over stdio (2026-07-28;
 * SEP-2575 with SEP-2663 "Task Status Notifications"). `serveStdio`'s
 * listen router (SDK v2.4) drops `taskIds`, acknowledges without them and
 * never asks for the extension, so the stdio entry's wire is wrapped
 * (`withTaskListen`) and a listen that asks for tasks is served here, with
 * the same wire as over HTTP (mcp-task-subscription.ts):
 *
 * - refused with -32602 (more than `maxTaskIds` ids, malformed) or -32021
 *   (the extension not declared in the request's client capabilities);
 * - otherwise passed on to the SDK without `taskIds`, so the SDK still
 *   checks the envelope and serves the list-changed fields, while the
 *   tasks are read for the listen's agent (mcp-task-watch.ts). The SDK's
 *   acknowledgement is held until they are, then sent with the task ids
 *   found (another agent's or an unknown id is left out), followed by each
 *   task's `DetailedTask` and then every status change, as
 *   `notifications/tasks` stamped with the subscription id;
 * - once every task is terminal and the SDK honored no list-changed field,
 *   the listen ends with the empty listen result (the SDK is told it was
 *   cancelled, so it forgets the subscription and never ends it twice);
 * - `notifications/cancelled` for the listen stops its tasks' watch (and
 *   goes on to the SDK); the SDK refusing or ending the listen stops it too.
 */
import {
  CLIENT_INFO_META_KEY,
  isJSONRPCNotification,
  isJSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/server';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  MessageExtraInfo,
  Transport,
} from '@modelcontextprotocol/server';
import { taskStoreFor } from './mcp-tasks.js';
import { watchTasks, type TaskWatch } from './mcp-task-watch.js';
import {
  acknowledgedFilter,
  asksForTasks,
  listenResult,
  readTaskListen,
  stamped,
  TASK_LISTEN_REVISIONS,
  taskParams,
  tasksUnreadable,
  tooManyListens,
  type ListenRefusal,
} from './mcp-task-subscription.js';
import { isObject } from '../../../kernel/index.js';
import type { Logger } from '../../../kernel/logger.js';
import type { ServingKernel } from '../../surface.js';

export interface StdioTaskListenOptions {
  kernel: ServingKernel;
  /** The agent a listen acts as, from the client name in its request envelope. */
  agentOf(clientName: string | undefined): string;
  logger: Logger;
  /** Task ids one listen may ask for (default 100). */
  maxTaskIds?: number;
  /** Open task listens per agent (default 8). */
  maxPerAgent?: number;
  /** How often a watch reads unfinished tasks regardless of events (mcp-task-watch.ts). */
  sweepMs?: number;
}

interface Subscription {
  id: JSONRPCRequest['id'];
  agent: string;
  /** The tasks, once read. */
  watch?: TaskWatch;
  /** The SDK's acknowledgement, held until the tasks are read. */
  ack?: JSONRPCNotification;
  /** What the SDK sent for this listen before the acknowledgement went out. */
  held: JSONRPCMessage[];
  acknowledged: boolean;
  /** The SDK honored a list-changed field: the listen stays open after its tasks end. */
  changes: boolean;
}

/** The client name a request's envelope gives (2026-07-28 per-request `clientInfo`). */
function clientNameOf(request: JSONRPCRequest): string | undefined {
  const info = request.params?._meta?.[CLIENT_INFO_META_KEY];
  return isObject(info) && typeof info['name'] === 'string' ? info['name'] : undefined;
}

const revisionOf = (request: JSONRPCRequest) =>
  String(request.params?._meta?.[PROTOCOL_VERSION_META_KEY] ?? '');

const toError = (value: unknown) => (value instanceof Error ? value : new Error(String(value)));

/** Sends the acknowledgement with the tasks found, their state, and starts following them. */
function acknowledgeListen(
  sub: Subscription,
  write: (message: JSONRPCMessage) => unknown,
  notify: (sub: Subscription, method: string, params: Record<string, unknown>) => void,
): void {
  if (sub.acknowledged || !sub.ack || !sub.watch) return;
  sub.acknowledged = true;
  const params = sub.ack.params ?? {};
  const honored = isObject(params['notifications']) ? params['notifications'] : {};
  sub.changes = Object.keys(honored).length > 0;
  void write({
    ...sub.ack,
    params: { ...params, ...acknowledgedFilter(honored, sub.watch.acknowledged) },
  });
  for (const view of sub.watch.initial) notify(sub, 'notifications/tasks', taskParams(view));
  for (const message of sub.held.splice(0)) void write(message);
  sub.watch.start();
}

/** The open task listen an outbound message belongs to. */
function subscriptionOf(
  subs: ReadonlyMap<unknown, Subscription>,
  message: JSONRPCMessage,
): Subscription | undefined {
  if (subs.size === 0) return undefined;
  if (isJSONRPCNotification(message))
    return subs.get(message.params?._meta?.[SUBSCRIPTION_ID_META_KEY]);
  return 'id' in message && !isJSONRPCRequest(message) ? subs.get(message.id) : undefined;
}

const listenStillOpen = (id: JSONRPCRequest['id']): ListenRefusal => ({
  code: -32600,
  message: `Invalid Request: a listen with id ${JSON.stringify(id)} is still open; use a new request id.`,
});

/**
 * `wire` (the stdio transport) for `serveStdio`, serving task listens.
 *
 * @example
 * serveStdio(factory, { transport: withTaskListen(new StdioServerTransport(), options) });
 */
export function withTaskListen(wire: Transport, options: StdioTaskListenOptions): Transport {
  const { kernel, logger } = options;
  const maxTaskIds = options.maxTaskIds ?? 100;
  const maxPerAgent = options.maxPerAgent ?? 8;
  const tasks = taskStoreFor(kernel);
  const subs = new Map<unknown, Subscription>();

  const write = (message: JSONRPCMessage) =>
    wire.send(message).catch((error: unknown) => entry.onerror?.(toError(error)));
  const refuse = (id: JSONRPCRequest['id'], error: ListenRefusal) =>
    void write({ jsonrpc: '2.0', id, error });
  const notify = (sub: Subscription, method: string, params: Record<string, unknown>) =>
    void write({ jsonrpc: '2.0', method, params: stamped(params, sub.id) });
  const toSdk = (message: JSONRPCMessage, extra?: MessageExtraInfo) =>
    entry.onmessage?.(message, extra);

  const drop = (sub: Subscription) => {
    if (subs.get(sub.id) === sub) subs.delete(sub.id);
    sub.watch?.stop();
  };
  /** Ends a listen Airlock ended: the SDK forgets its side as it would on the client's cancel. */
  const forget = (id: JSONRPCRequest['id']) =>
    toSdk({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });

  const acknowledge = (sub: Subscription) => acknowledgeListen(sub, write, notify);

  function open(request: JSONRPCRequest, extra?: MessageExtraInfo) {
    const asked = readTaskListen(request, maxTaskIds);
    if (!asked.ok) return refuse(request.id, asked.refusal);
    const agent = options.agentOf(clientNameOf(request));
    if ([...subs.values()].filter((s) => s.agent === agent).length >= maxPerAgent)
      return refuse(request.id, tooManyListens(maxPerAgent));
    if (subs.has(request.id)) return refuse(request.id, listenStillOpen(request.id));
    const sub: Subscription = {
      id: request.id,
      agent,
      held: [],
      acknowledged: false,
      changes: false,
    };
    subs.set(sub.id, sub);
    const notifications = { ...(request.params?.['notifications'] as Record<string, unknown>) };
    delete notifications['taskIds'];
    toSdk({ ...request, params: { ...request.params, notifications } }, extra);
    watchTasks({
      kernel,
      tasks,
      agent,
      taskIds: asked.taskIds,
      ...(options.sweepMs !== undefined ? { sweepMs: options.sweepMs } : {}),
      onView: (view) => notify(sub, 'notifications/tasks', taskParams(view)),
      // Nothing left to deliver: ended as the SDK ends a listen over HTTP with an empty filter.
      onIdle() {
        if (sub.changes || subs.get(sub.id) !== sub) return;
        drop(sub);
        void write(listenResult(sub.id));
        forget(sub.id);
      },
    }).then(
      (watch) => {
        if (subs.get(sub.id) !== sub) return watch.stop();
        sub.watch = watch;
        acknowledge(sub);
      },
      (error: unknown) => {
        logger.warn({ err: error }, 'could not read the tasks of a listen');
        if (subs.get(sub.id) !== sub) return;
        drop(sub);
        forget(sub.id);
        refuse(sub.id, tasksUnreadable);
      },
    );
  }

  const stopAll = () => {
    for (const sub of [...subs.values()]) drop(sub);
  };

  wire.onmessage = (message, extra) => {
    if (
      isJSONRPCRequest(message) &&
      asksForTasks(message) &&
      TASK_LISTEN_REVISIONS.has(revisionOf(message))
    )
      return open(message, extra);
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const sub = subs.get(message.params?.['requestId']);
      if (sub) drop(sub);
    }
    toSdk(message, extra);
  };
  wire.onerror = (error) => entry.onerror?.(error);
  wire.onclose = () => {
    stopAll();
    entry.onclose?.();
  };

  const entry: Transport = {
    start: () => wire.start(),
    async send(message, sendOptions) {
      const sub = subscriptionOf(subs, message);
      if (sub && isJSONRPCNotification(message)) {
        if (message.method === 'notifications/subscriptions/acknowledged' && !sub.ack) {
          sub.ack = message;
          return acknowledge(sub);
        }
        if (!sub.acknowledged) return void sub.held.push(message);
      } else if (sub) {
        // The SDK answered the listen: it refused it, or ends it as its connection closes.
        drop(sub);
      }
      return wire.send(message, sendOptions);
    },
    async close() {
      stopAll();
      await wire.close();
    },
    setProtocolVersion: (version) => wire.setProtocolVersion?.(version),
  };
  return entry;
}
