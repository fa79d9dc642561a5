/**
 * `subscriptions/listen` with `notifications.taskIds` over streamable HTTP
 * (2026-07-28; SEP-2575 with SEP-2663 "Task Status Notifications"). The
 * SDK's listen router (v2.4) knows only the four list-changed fields and
 * drops `taskIds`, so such a listen is served here, before the SDK entry;
 * every other listen stays the SDK's. (Over stdio: mcp-task-listen-stdio.ts;
 * what both send and refuse: mcp-task-subscription.ts.)
 *
 * The stream is the SDK's, plus tasks: the acknowledgement lists the
 * honored list-changed fields and the task ids found for the caller (another
 * agent's or an unknown id is left out, never confirmed); then each
 * acknowledged task's `DetailedTask` once, and again on every status change
 * (mcp-task-watch.ts), as `notifications/tasks`; the list-changed
 * notifications come from the SDK's event bus. Every notification carries
 * the subscription id (the request's id) in `_meta`. Nothing else is sent
 * for a task (no progress, no log messages). Once every task is terminal
 * and no list-changed field was honored, the stream ends with the empty
 * listen result, as the SDK ends a listen with nothing to deliver.
 *
 * Limits (authority.md §4): `maxTaskIds` ids per listen, `maxPerAgent` open
 * listens per agent; a revoked agent's listens end at once.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import type { ServerCapabilities, ServerEventBus } from '@modelcontextprotocol/server';
import { followChanges, honoredChanges } from '../mcp-listen-changes.js';
import { openListenStream } from '../mcp-listen-stream.js';
import { taskStoreFor } from './mcp-tasks.js';
import {
  acknowledgedFilter,
  asksForTasks,
  readTaskListen,
  taskParams,
  tasksUnreadable,
  TASK_LISTEN_REVISIONS,
  tooManyListens,
  type ListenRefusal,
} from './mcp-task-subscription.js';
import { watchTasks, type TaskWatch } from './mcp-task-watch.js';
import { header, sendJson } from '../../http/http-util.js';
import type { Logger } from '../../../kernel/logger.js';
import type { ServingKernel } from '../../surface.js';

export interface TaskListenOptions {
  kernel: ServingKernel;
  /** The SDK entry's event bus (`createMcpHandler(...).bus`): the list-changed events. */
  bus: ServerEventBus;
  /** The endpoint's server capabilities, which narrow the list-changed fields honored. */
  capabilities(): ServerCapabilities;
  logger: Logger;
  /** Task ids one listen may ask for (default 100). */
  maxTaskIds?: number;
  /** Open task listens per agent (default 8). */
  maxPerAgent?: number;
  /** SSE comment interval that keeps proxies from closing a quiet stream (default 15 s). */
  keepAliveMs?: number;
}

export interface TaskListen {
  /** True for a well-formed 2026-era `subscriptions/listen` that asks for `taskIds`. */
  claims(req: IncomingMessage, body: unknown): boolean;
  serve(req: IncomingMessage, res: ServerResponse, body: unknown, agent: string): Promise<void>;
  readonly openCount: number;
  /** Ends every open listen gracefully (the empty listen result). */
  close(): void;
}

/** A refusal's HTTP status: a missing extension is the client's to fix before retrying (400). */
const statusOf = (refusal: ListenRefusal) => (refusal.code === -32021 ? 400 : 200);

export function createTaskListen(options: TaskListenOptions): TaskListen {
  const { kernel, logger } = options;
  const maxTaskIds = options.maxTaskIds ?? 100;
  const maxPerAgent = options.maxPerAgent ?? 8;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const tasks = taskStoreFor(kernel);
  /** Open listens: how to end each (graceful: with the listen result), and its agent. */
  const open = new Map<(graceful: boolean) => void, string>();

  // A revoked agent's listens end at once (its token already fails).
  const unsubscribe = kernel.events.subscribe(
    ({ data }) => {
      if (data.event !== 'agentsChanged' || data.change !== 'revoked') return;
      const revoked = data.key ?? data.agent;
      for (const [end, agent] of open) if (agent === revoked) end(false);
    },
    { events: ['agentsChanged'] },
  );

  const refuse = (
    res: ServerResponse,
    id: unknown,
    error: ListenRefusal,
    status = statusOf(error),
  ) => sendJson(res, status, { jsonrpc: '2.0', id, error });

  return {
    claims(req, body) {
      if (!asksForTasks(body)) return false;
      const version = header(req, 'mcp-protocol-version');
      const method = header(req, 'mcp-method');
      const route = classifyInboundRequest({
        httpMethod: req.method ?? 'POST',
        ...(version !== undefined ? { protocolVersionHeader: version } : {}),
        ...(method !== undefined ? { mcpMethodHeader: method } : {}),
        body,
      });
      // Whatever the SDK entry would refuse (envelope, revision, missing headers) it refuses itself.
      return (
        route.kind === 'modern' &&
        route.messageKind === 'request' &&
        TASK_LISTEN_REVISIONS.has(route.classification.revision ?? '') &&
        version !== undefined &&
        method !== undefined
      );
    },

    async serve(req, res, body, agent) {
      const asked = readTaskListen(body, maxTaskIds);
      if (!asked.ok) return refuse(res, asked.id, asked.refusal);
      if ([...open.values()].filter((a) => a === agent).length >= maxPerAgent)
        return refuse(res, asked.id, tooManyListens(maxPerAgent), 429);
      const changes = honoredChanges(asked.requested, options.capabilities());
      let stopChanges = () => undefined as void;
      let watch: TaskWatch | null = null;
      const stream = openListenStream(res, asked.id, {
        keepAliveMs,
        onEnd() {
          open.delete(stream.end);
          watch?.stop();
          stopChanges();
        },
      });
      open.set(stream.end, agent);
      watch = await watchTasks({
        kernel,
        tasks,
        agent,
        taskIds: asked.taskIds,
        onView: (view) => stream.notify('notifications/tasks', taskParams(view)),
        // Nothing left to deliver: ended as the SDK ends a listen with an empty filter.
        onIdle: () => Object.keys(changes).length === 0 && stream.end(true),
      }).catch((error: unknown) => {
        logger.warn({ err: error }, 'could not read the tasks of a listen');
        return null;
      });
      if (!watch) {
        open.delete(stream.end);
        return refuse(res, asked.id, tasksUnreadable, 503);
      }
      if (stream.ended) return watch.stop();
      stream.notify(
        'notifications/subscriptions/acknowledged',
        acknowledgedFilter(changes, watch.acknowledged),
      );
      for (const view of watch.initial) stream.notify('notifications/tasks', taskParams(view));
      stopChanges = followChanges(options.bus, changes, (n) => stream.notify(n.method, n.params));
      watch.start();
    },

    get openCount() {
      return open.size;
    },

    close() {
      unsubscribe();
      for (const end of [...open.keys()]) end(true);
    },
  };
}
