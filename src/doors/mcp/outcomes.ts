/**
 * Settling the writes of one upstream that a crash left open
 * (spec/gateway.md "Idempotency"; kernel.md §6). A journaled write sent as
 * an upstream task (upstream-tasks.ts) has its task id stored here
 * (`mcp.tasks`, keyed by mount and journal key) before Airlock waits for
 * it. An open operation — prepared when Airlock was killed mid-call,
 * uncertain when the upstream died or the call was cut — is then settled
 * from the upstream: a completed task commits its result as the receipt; a
 * failed one (an error result, which changed nothing) leaves the operation
 * to run afresh; one still running is followed until it ends. Only when the
 * upstream cannot say — the call was not a task, or the upstream no longer
 * knows the task (it kept its tasks in memory and restarted, or bound them
 * to its old session), or it cancelled it — is the operation settled as
 * unknown: the agent's retry answers `mutationUncertain`, naming what to
 * check. Nothing is ever run twice and nothing stays open for good: this runs
 * at every start (the kernel asks the door) and each time the upstream
 * (re)connects.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import type { JournalEntry, Kernel, Logger, Resolution } from '../../kernel/index.js';
import type { Upstream } from './upstream/upstream.js';
import { TASK_TTL_MS, taskResult, taskStatus } from './upstream/upstream-tasks.js';

export const TASKS = 'mcp.tasks';

interface TaskRecord {
  taskId: string;
  /** The upstream's own tool name. */
  tool: string;
  at: number;
  /** The upstream said the task failed (its error result changed nothing): the operation may run again. */
  failed?: true;
}

/** How long settling waits for an upstream that is (re)starting. */
const SETTLE_WAIT_MS = 5_000;
/** How long before a task whose result could not be awaited is looked at again. */
const FOLLOW_RETRY_MS = 5_000;
const UNKNOWN: Resolution = { exists: 'unknown' };

export interface Outcomes {
  /** Stores the upstream task an operation runs as, before the call waits for it. */
  keep(operation: string, tool: string, taskId: string): Promise<void>;
  /** The door's `resolveOperation`: what the upstream says of one open operation. */
  resolve(entry: JournalEntry): Promise<Resolution>;
  /** Settles every open operation of this upstream now (one run at a time). */
  settle(): Promise<void>;
  /** Settles soon, in the background (after a reconnect, or a call left open). */
  soon(delayMs?: number): void;
}

export function createOutcomes(options: {
  mount: string;
  upstream: Upstream;
  kernel: () => Kernel | null;
  logger: Logger;
}): Outcomes {
  const { mount, upstream, logger } = options;
  const keyOf = (operation: string) => `${mount} ${operation}`;
  const followed = new Set<string>();
  let running: Promise<void> | null = null;
  let again = false;

  const put = (k: Kernel, operation: string, value: TaskRecord) =>
    k.store.transaction((tx) => tx.records.put(TASKS, keyOf(operation), value));

  /** Waits for a task still running, then settles again. */
  function follow(taskId: string) {
    if (followed.has(taskId)) return;
    followed.add(taskId);
    void (async () => {
      const client = await upstream.client(SETTLE_WAIT_MS);
      // Unreachable: settled again when it reconnects.
      if ('ok' in client) return;
      const ended = await taskResult(client, taskId, { timeout: TASK_TTL_MS }).then(
        () => true,
        () => false,
      );
      // An upstream whose `tasks/result` does not wait is asked again later, not in a loop.
      outcomes.soon(ended ? 0 : FOLLOW_RETRY_MS);
    })().finally(() => followed.delete(taskId));
  }

  /** Records of operations no longer open (committed, expired) are dropped. */
  async function sweep(k: Kernel) {
    const records = await k.store.read((tx) =>
      tx.records.list<TaskRecord>(TASKS, { prefix: `${mount} ` }),
    );
    for (const record of records) {
      const operation = record.key.slice(mount.length + 1);
      const entry = await k.store.read((tx) => tx.journal.get(mount, operation));
      if (!entry || entry.state === 'committed')
        await k.store.transaction((tx) => tx.records.delete(TASKS, record.key));
    }
  }

  const outcomes: Outcomes = {
    async keep(operation, tool, taskId) {
      const k = options.kernel();
      if (k) await put(k, operation, { taskId, tool, at: Date.now() });
    },

    async resolve(entry) {
      const k = options.kernel();
      if (!k) return UNKNOWN;
      const record = await k.store.read((tx) =>
        tx.records.get<TaskRecord>(TASKS, keyOf(entry.operationId)),
      );
      // Not sent as a task: the upstream has nothing to look the call up by.
      if (!record) return UNKNOWN;
      const task = record.value;
      if (task.failed) return { exists: false };
      const client = await upstream.client(SETTLE_WAIT_MS);
      // Unreachable now: unknown until it is back (settled again then).
      if ('ok' in client) return UNKNOWN;
      try {
        const status = await taskStatus(client, task.taskId);
        if (status === 'completed' || status === 'failed') {
          const result = status === 'completed' ? await taskResult(client, task.taskId) : null;
          if (result && !result.isError) return { exists: true, receipt: result };
          await put(k, entry.operationId, { ...task, failed: true });
          return { exists: false };
        }
        if (status === 'cancelled') {
          await k.store.transaction((tx) => tx.records.delete(TASKS, keyOf(entry.operationId)));
          return UNKNOWN;
        }
        follow(task.taskId);
        return UNKNOWN;
      } catch (error) {
        // The upstream answered that it does not know the task: it never will.
        if (error instanceof ProtocolError)
          await k.store.transaction((tx) => tx.records.delete(TASKS, keyOf(entry.operationId)));
        logger.warn(
          { upstream: mount, taskId: task.taskId, err: (error as Error).message },
          'the upstream cannot say how an interrupted write ended; it stays uncertain',
        );
        return UNKNOWN;
      }
    },

    settle() {
      const k = options.kernel();
      if (!k) return Promise.resolve();
      // Asked while a run is under way: one more run after it (an operation may have opened since).
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await sweep(k);
          await k.journal.resolvePending((entry) => outcomes.resolve(entry), { scope: mount });
        } while (again);
      })()
        .catch((err: unknown) =>
          logger.warn({ upstream: mount, err }, 'could not settle the upstream’s open writes'),
        )
        .finally(() => (running = null));
      return running;
    },

    soon(delayMs = 0) {
      setTimeout(() => void outcomes.settle(), delayMs).unref();
    },
  };
  return outcomes;
}
