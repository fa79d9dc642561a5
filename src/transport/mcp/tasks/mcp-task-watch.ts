/**
 * Follows some of one agent's MCP tasks for a `subscriptions/listen` stream
 * (SEP-2663 "Task Status Notifications"): the caller gets each task's
 * `DetailedTask` — exactly what `tasks/get` answers at that moment — once
 * when the watch starts and again on every status change, until the task
 * is terminal.
 *
 * Driven by kernel events, which reach every instance over the bus: the
 * task store's `taskChanged` (a record's new status) and `jobFinished` of
 * the job that runs a task or the job a task follows (whose end the store
 * learns only when the task is read). A slow sweep reads the unfinished
 * tasks again, so a missed event (the bus was down, a job id learned late)
 * only delays a notification. A status that is left again before the task
 * is read (e.g. an `input_required` answered at once) is not reported.
 */
import {
  isTerminal,
  viewOf,
  type TaskStatus,
  type TaskStore,
  type TaskView,
} from './mcp-task-store.js';
import type { ServingKernel } from '../../surface.js';

/** How often unfinished tasks are read again regardless of events. */
export const TASK_SWEEP_MS = 5_000;

export interface TaskWatchOptions {
  kernel: Pick<ServingKernel, 'events'>;
  tasks: TaskStore;
  /** The agent the listen acts as: another agent's task is never found. */
  agent: string;
  taskIds: readonly string[];
  /** A task's view after the first (sent once `start` is called). */
  onView(view: TaskView): void;
  /** Every watched task is terminal (or gone): nothing more will come. */
  onIdle(): void;
  sweepMs?: number;
}

export interface TaskWatch {
  /** The ids found for this agent, in the order asked, without repeats. */
  readonly acknowledged: string[];
  /** Each acknowledged task as it is now. */
  readonly initial: TaskView[];
  /** Begins delivering changes (after the caller has written the ack and `initial`). */
  start(): void;
  stop(): void;
}

interface Followed {
  status: TaskStatus;
  /** Jobs whose end may change the task: its runner and the job it follows. */
  jobs: Set<string>;
  reading: Promise<void> | null;
  again: boolean;
}

const jobsOf = (task: { runner: string | null; job: string | null }) =>
  new Set([task.runner, task.job].filter((j): j is string => j !== null));

export async function watchTasks(options: TaskWatchOptions): Promise<TaskWatch> {
  const { kernel, tasks, agent } = options;
  const followed = new Map<string, Followed>();
  let live = false;
  let stopped = false;
  let idled = false;
  const idle = () => {
    if (idled || stopped) return;
    idled = true;
    options.onIdle();
  };
  const pending = new Set<string>();

  const touch = (taskId: string) => {
    if (stopped || !followed.has(taskId)) return;
    if (!live) pending.add(taskId);
    else void read(taskId);
  };
  // Subscribed before the first reads, so a change while they run is read again.
  const unsubscribe = kernel.events.subscribe(
    ({ data }) => {
      if (data.event === 'taskChanged' && typeof data.taskId === 'string') touch(data.taskId);
      else if (data.event === 'jobFinished')
        for (const [taskId, f] of followed) if (f.jobs.has(String(data.id))) touch(taskId);
    },
    { events: ['taskChanged', 'jobFinished'] },
  );

  const acknowledged: string[] = [];
  const initial: TaskView[] = [];
  try {
    for (const taskId of new Set(options.taskIds)) {
      const task = await tasks.find(taskId, agent);
      if (!task) continue;
      acknowledged.push(taskId);
      initial.push(viewOf(task, true));
      if (!isTerminal(task.status))
        followed.set(taskId, {
          status: task.status,
          jobs: jobsOf(task),
          reading: null,
          again: false,
        });
    }
  } catch (error) {
    unsubscribe();
    throw error;
  }

  /** Reads a task (one read at a time per task) and reports a new status. */
  function read(taskId: string): Promise<void> {
    const f = followed.get(taskId);
    if (!f) return Promise.resolve();
    if (f.reading) {
      f.again = true;
      return f.reading;
    }
    f.reading = (async () => {
      do {
        f.again = false;
        const task = await tasks.find(taskId, agent).catch(() => undefined);
        if (stopped || task === undefined) break;
        if (task === null) {
          // Expired: nothing more will be said of it.
          followed.delete(taskId);
          break;
        }
        f.jobs = jobsOf(task);
        if (task.status !== f.status) {
          f.status = task.status;
          options.onView(viewOf(task, true));
        }
        if (isTerminal(task.status)) followed.delete(taskId);
      } while (f.again && !stopped);
      f.reading = null;
      if (followed.size === 0) idle();
    })();
    return f.reading;
  }

  let sweep: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    stopped = true;
    unsubscribe();
    if (sweep) clearInterval(sweep);
  };
  return {
    acknowledged,
    initial,
    start() {
      if (live || stopped) return;
      live = true;
      if (followed.size === 0) return idle();
      for (const taskId of pending) void read(taskId);
      pending.clear();
      sweep = setInterval(() => {
        for (const taskId of followed.keys()) void read(taskId);
      }, options.sweepMs ?? TASK_SWEEP_MS);
      sweep.unref();
    },
    stop,
  };
}
