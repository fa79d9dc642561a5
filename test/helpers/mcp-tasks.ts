/**
 * An SDK client that speaks the MCP tasks extension (SEP-2663) on the
 * 2026-07-28 wire. The SDK client (v2.4) has no task support of its own: it
 * sends `tasks/get`, `tasks/update` and `tasks/cancel` as extension methods
 * with our result schemas, but rejects a `tools/call` answered with
 * `resultType: "task"` (UnsupportedResultType). `create` therefore reads
 * that CreateTaskResult off the transport, where it arrived before the
 * client refused it.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { MODERN_PROTOCOL } from './mcp-client.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(['working', 'input_required', 'completed', 'failed', 'cancelled']),
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().int().nullable(),
  pollIntervalMs: z.number().int().optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});
export type TaskView = z.infer<typeof TaskSchema>;

export interface TaskClient {
  client: Client;
  /**
   * Calls `name` and answers the CreateTaskResult (throws when the call
   * answered anything else); `extra` goes into the params (e.g. `inputResponses`).
   */
  create(
    name: string,
    args: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  get(taskId: string): Promise<TaskView>;
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<unknown>;
  cancel(taskId: string): Promise<unknown>;
  /** Polls `tasks/get` until `done` holds (default: a terminal status), for up to `ms`. */
  until(taskId: string, done?: (t: TaskView) => boolean, ms?: number): Promise<TaskView>;
  close(): Promise<void>;
}

const terminal = (t: TaskView) => ['completed', 'failed', 'cancelled'].includes(t.status);

/** Connects a 2026-era client over `transport`; `extension: false` leaves the tasks extension out. */
export async function taskClient(
  transport: Transport,
  options: { name?: string; extension?: boolean } = {},
): Promise<TaskClient> {
  const client = new Client(
    { name: options.name ?? 'task-client', version: '1.0.0' },
    {
      capabilities: {
        elicitation: { form: {}, url: {} },
        ...(options.extension === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } }),
      },
      versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
    },
  );
  await client.connect(transport);
  let created: Record<string, unknown> | undefined;
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const result = (message as { result?: Record<string, unknown> }).result;
    if (result?.['resultType'] === 'task') created = result;
    deliver?.(message, extra);
  };
  const tc: TaskClient = {
    client,
    async create(name, args, extra = {}) {
      created = undefined;
      const answered = await client
        .request({ method: 'tools/call', params: { name, arguments: args, ...extra } })
        .catch((error: unknown) => {
          if (!created) throw error;
        });
      if (!created) throw new Error(`${name} answered without a task: ${JSON.stringify(answered)}`);
      return created;
    },
    get: (taskId) => client.request({ method: 'tasks/get', params: { taskId } }, TaskSchema),
    update: (taskId, inputResponses) =>
      client.request(
        { method: 'tasks/update', params: { taskId, inputResponses } },
        z.looseObject({}),
      ),
    cancel: (taskId) =>
      client.request({ method: 'tasks/cancel', params: { taskId } }, z.looseObject({})),
    async until(taskId, done = terminal, ms = 15_000) {
      const end = Date.now() + ms;
      for (;;) {
        const task = await tc.get(taskId);
        if (done(task) || terminal(task)) return task;
        if (Date.now() > end) throw new Error(`task ${taskId} still ${task.status} after ${ms} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    close: () => client.close(),
  };
  return tc;
}

/** A task client over streamable HTTP at `url` with an agent's bearer token. */
export function httpTaskClient(
  url: string,
  token: string,
  options: { name?: string; extension?: boolean } = {},
): Promise<TaskClient> {
  return taskClient(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
    options,
  );
}
