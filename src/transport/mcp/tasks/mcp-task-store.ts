/**
 * MCP tasks (SEP-2663) kept in the shared store, so `tasks/get`,
 * `tasks/update` and `tasks/cancel` answer the same on every instance.
 *
 * A task record lives in the `mcp-tasks` record collection. It belongs to
 * the agent whose call created it: any other agent finds nothing. Its status
 * comes from the record until the call's result names a kernel job the tool
 * started (`koharu.start_pipeline`): from then on it follows that job. A
 * record whose runner job ended without a word (its instance died) reads
 * `failed`.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { isFinal } from '../../../kernel/jobs.js';
import type { Job } from '../../../kernel/records.js';
import type { ServingKernel } from '../../surface.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const COLLECTION = 'mcp-tasks';
/** Each task's key again under its agent (`<agent>/<taskId>`), for `tasks/list`. */
const BY_AGENT = 'mcp-tasks-by-agent';
const indexKey = (agent: string, taskId: string) => `${encodeURIComponent(agent)}/${taskId}`;
/** How long a task stays readable after it was created. */
export const TASK_TTL_MS = 60 * 60 * 1000;
/** How often a client should poll `tasks/get`. */
export const TASK_POLL_MS = 500;

export const TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);
export const isTerminal = (status: TaskStatus) => TERMINAL.has(status);

const JsonObject = z.record(z.string(), z.unknown());
export const TaskErrorSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export const TaskRecordSchema = z.object({
  taskId: z.string(),
  /** The agent whose call created the task; only it may read, update or cancel it. */
  agent: z.string(),
  mount: z.string(),
  tool: z.string(),
  status: z.enum(TASK_STATUSES),
  statusMessage: z.string().optional(),
  /** The kernel job that runs the call (mcp-task-runner.ts), null until started. */
  runner: z.string().nullable(),
  /** The kernel job the tool started and the task follows, when its result named one. */
  job: z.string().nullable(),
  result: JsonObject.optional(),
  error: TaskErrorSchema.optional(),
  /** Requests the client must answer (tasks/update), keyed by the ids the tool chose. */
  inputRequests: JsonObject.optional(),
  /** `approval`: the owner decides (answers are not consumed); `input`: the client answers. */
  waitingFor: z.enum(['input', 'approval']).optional(),
  /** The approval the task waits for (`waitingFor: 'approval'`): a 2025-era elicitation's id. */
  approvalId: z.string().optional(),
  /** Answers received so far for the current round. */
  inputResponses: JsonObject.optional(),
  /** The tool's sealed state for the next round, never shown to the client. */
  requestState: z.string().optional(),
  createdAt: z.number(),
  updatedAt: z.number(),
  ttlMs: z.number().int(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** A task as the wire shows it (SEP-2663 `Task`, plus what `DetailedTask` inlines). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Record<string, unknown>;
  error?: z.infer<typeof TaskErrorSchema>;
  inputRequests?: Record<string, unknown>;
}

/** The most of one agent's task ids one `tasks/list` page reads. */
const LIST_SCAN_MAX = 1000;
/** How often `create` clears expired tasks out of the store (at most). */
const PURGE_EVERY_MS = 60_000;

export function createTaskStore(
  kernel: Pick<ServingKernel, 'store' | 'jobs' | 'events'>,
  now: () => number = Date.now,
) {
  let purgedAt = 0;
  const purge = () => purgeTasks(kernel, now());
  const read = async (taskId: string) => {
    const found = await kernel.store.read((tx) => tx.records.get(COLLECTION, taskId));
    const parsed = TaskRecordSchema.safeParse(found?.value);
    return parsed.success ? parsed.data : null;
  };

  /**
   * Applies `change` to the record in one transaction; null when there is no
   * such record. A new status is announced (`taskChanged`, on every
   * instance) once it is committed, for the listen streams (mcp-task-watch.ts).
   */
  const update = async (taskId: string, change: (task: TaskRecord) => TaskRecord | null) => {
    let moved = false;
    const saved = await kernel.store.transaction(async (tx) => {
      const found = TaskRecordSchema.safeParse((await tx.records.get(COLLECTION, taskId))?.value);
      if (!found.success) return null;
      const next = change(found.data);
      if (!next) return found.data;
      moved = next.status !== found.data.status;
      const record = { ...next, updatedAt: now() };
      await tx.records.put(COLLECTION, taskId, record);
      return record;
    });
    if (saved && moved)
      kernel.events.publish({
        event: 'taskChanged',
        taskId,
        agent: saved.agent,
        status: saved.status,
      });
    return saved;
  };

  /** Moves a task that is not yet terminal; a terminal one is left as it is. */
  const advance = (taskId: string, patch: Partial<TaskRecord>) =>
    update(taskId, (task) => (isTerminal(task.status) ? null : { ...task, ...patch }));

  /** The task as `agent` may see it: null when unknown, expired or another agent's. */
  const find = async (taskId: string, agent: string): Promise<TaskRecord | null> => {
    const task = await read(taskId);
    if (!task || task.agent !== agent) return null;
    if (task.createdAt + task.ttlMs < now()) {
      await kernel.store.transaction(async (tx) => {
        await tx.records.delete(COLLECTION, taskId);
        await tx.records.delete(BY_AGENT, indexKey(agent, taskId));
      });
      return null;
    }
    return settle(task);
  };

  return {
    /** Creates a `working` task, durably, before anyone is told its id. */
    async create(owner: { agent: string; mount: string; tool: string }): Promise<TaskRecord> {
      const at = now();
      if (at - purgedAt >= PURGE_EVERY_MS) {
        purgedAt = at;
        // Housekeeping only: a purge that fails is tried again a minute later.
        await purge().catch(() => 0);
      }
      const task: TaskRecord = {
        // Creation time first (fixed width), so the collection's key order is the tasks' age.
        taskId: `${at.toString(36).padStart(10, '0')}-${randomUUID()}`,
        ...owner,
        status: 'working',
        runner: null,
        job: null,
        createdAt: at,
        updatedAt: at,
        ttlMs: TASK_TTL_MS,
      };
      await kernel.store.transaction(async (tx) => {
        await tx.records.put(COLLECTION, task.taskId, task);
        await tx.records.put(BY_AGENT, indexKey(task.agent, task.taskId), {});
      });
      return task;
    },

    find,

    /** `agent`'s tasks, oldest first: a page of `tasks/list` after the task id `after`. */
    list: (agent: string, after: string | undefined, limit: number) =>
      listTasks(kernel, find, agent, after, limit),

    read,
    update,
    purge,
    advance,

    cancel: (task: TaskRecord) => cancelTask(kernel, advance, task),
  };

  /** The record brought up to date with the jobs it depends on. */
  async function settle(task: TaskRecord): Promise<TaskRecord> {
    if (isTerminal(task.status)) return task;
    if (task.job) {
      // The job the task's tool started: the task's agent's own, never another's.
      const job = await kernel.jobs.seenBy(task.agent).get(task.job);
      if (!job) return task;
      const followed = fromJob(job);
      if (!isTerminal(followed.status))
        return { ...task, ...followed, updatedAt: Math.max(task.updatedAt, job.updatedAt) };
      return (
        (await update(task.taskId, (t) => (isTerminal(t.status) ? null : { ...t, ...followed }))) ??
        task
      );
    }
    if (task.runner) {
      const runner = await kernel.jobs.get(task.runner);
      // The runner writes the outcome before it finishes: a finished runner
      // with a task still open stopped with its instance.
      if (runner && isFinal(runner.status)) {
        const fresh = await read(task.taskId);
        // The runner handed the task to the job it started, then ended: follow that job.
        if (fresh?.job) return settle(fresh);
        if (fresh && !isTerminal(fresh.status)) {
          const after = await update(task.taskId, (t) =>
            isTerminal(t.status) || t.job
              ? null
              : {
                  ...t,
                  status: 'failed',
                  statusMessage: 'interrupted',
                  error: {
                    code: -32603,
                    message: `The instance running this task stopped (${runner.error ?? runner.status}); call ${task.tool} again.`,
                  },
                },
          );
          return after?.job && !isTerminal(after.status) ? settle(after) : (after ?? task);
        }
        return fresh ?? task;
      }
    }
    return task;
  }
}

export type TaskStore = ReturnType<typeof createTaskStore>;

/** Deletes expired tasks, oldest first: ids begin with their creation time, so key order is age. */
function purgeTasks(kernel: Pick<ServingKernel, 'store'>, at: number) {
  return kernel.store.transaction(async (tx) => {
    let deleted = 0;
    for (const rec of await tx.records.list(COLLECTION, { limit: 500 })) {
      const task = TaskRecordSchema.safeParse(rec.value);
      if (task.success && task.data.createdAt + task.data.ttlMs >= at) break;
      await tx.records.delete(COLLECTION, rec.key);
      if (task.success) await tx.records.delete(BY_AGENT, indexKey(task.data.agent, rec.key));
      deleted++;
    }
    return deleted;
  });
}

/**
 * Cancels a task that is not terminal (tasks/cancel, either era) and stops
 * its jobs wherever they run (the registry asks their instance over the
 * bus); the record as it is then.
 */
async function cancelTask(
  kernel: Pick<ServingKernel, 'jobs'>,
  advance: (taskId: string, patch: Partial<TaskRecord>) => Promise<TaskRecord | null>,
  task: TaskRecord,
): Promise<TaskRecord | null> {
  const cancelled = await advance(task.taskId, {
    status: 'cancelled',
    statusMessage: 'cancelled by the client',
  });
  const jobs = kernel.jobs.seenBy(task.agent);
  for (const job of [cancelled?.runner, cancelled?.job]) if (job) await jobs.cancel(job);
  return cancelled;
}

/**
 * `agent`'s tasks, oldest first, `limit` after the task id `after`, each as
 * `find` answers it; `more` when further tasks follow. At most
 * LIST_SCAN_MAX of an agent's task ids are read per page.
 */
async function listTasks(
  kernel: Pick<ServingKernel, 'store'>,
  find: (taskId: string, agent: string) => Promise<TaskRecord | null>,
  agent: string,
  after: string | undefined,
  limit: number,
): Promise<{ tasks: TaskRecord[]; more: boolean }> {
  const prefix = `${encodeURIComponent(agent)}/`;
  const keys = (
    await kernel.store.read((tx) => tx.records.list(BY_AGENT, { prefix, limit: LIST_SCAN_MAX }))
  )
    .map((r) => r.key.slice(prefix.length))
    .filter((id) => after === undefined || id > after);
  const tasks: TaskRecord[] = [];
  let i = 0;
  for (; i < keys.length && tasks.length < limit; i++) {
    const task = await find(keys[i]!, agent);
    if (task) tasks.push(task);
  }
  return { tasks, more: i < keys.length };
}

/** What a task following a kernel job shows: its status, progress and, at the end, the job. */
export function fromJob(job: Job): Pick<TaskRecord, 'status' | 'statusMessage' | 'result'> {
  const p = job.progress;
  const progress = p.step
    ? `${p.step}: ${p.currentUnit}/${p.totalUnits} (step ${p.currentStepIndex + 1}/${p.totalSteps}), ${p.overallPercent}%`
    : `${job.status}, ${p.overallPercent}%`;
  if (!isFinal(job.status)) return { status: 'working', statusMessage: progress };
  if (job.status === 'cancelled') return { status: 'cancelled', statusMessage: 'cancelled' };
  const summary = {
    jobId: job.id,
    status: job.status,
    progress: job.progress,
    warnings: job.warnings,
    error: job.error,
  };
  return {
    status: 'completed',
    statusMessage: job.status,
    result: {
      content: [{ type: 'text', text: JSON.stringify(summary) }],
      structuredContent: summary,
      // The job's own failure is the tool's, not the protocol's (SEP-2663 error semantics).
      ...(job.status === 'failed' ? { isError: true } : {}),
    },
  };
}

/** The wire view of a task; `detailed` adds the result, error or pending input (tasks/get). */
export function viewOf(task: TaskRecord, detailed: boolean): TaskView {
  const view: TaskView = {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage ? { statusMessage: task.statusMessage } : {}),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs: TASK_POLL_MS,
  };
  if (!detailed) return view;
  if (task.status === 'completed' && task.result) view.result = task.result;
  if (task.status === 'failed' && task.error) view.error = task.error;
  if (task.status === 'input_required' && task.inputRequests)
    view.inputRequests = task.inputRequests;
  return view;
}
