/**
 * Runs the call behind an MCP task (SEP-2663, and the 2025-11-25 tasks of
 * mcp-tasks-2025.ts) as a kernel job (kind
 * `mcp-task`), so it is listed, evented, cancellable from any instance over
 * the bus and failed `interrupted` when its instance dies, like every job.
 *
 * Each round is one whole kernel call. Between rounds the task waits, in
 * `input_required`, for what the call asked for:
 * - a policy approval (`approvalRequired`): the owner's decision, shown to
 *   the client as a URL elicitation to the approval in the web UI; the call
 *   then runs again and the kernel finds the decision;
 * - an `input_required` result of the tool (SEP-2322): the client's answers
 *   through `tasks/update`, handed to the next round with the tool's state.
 * The round's result, its protocol error, or the job the tool started (the
 * task then follows it) is written to the task record before the job ends.
 */
import { inputRequired } from '@modelcontextprotocol/server';
import { approvalMessage, approvalUrl, decided, pendingApproval } from '../approval-delivery.js';
import { isTerminal, type TaskRecord, type TaskStore } from './mcp-task-store.js';
import type { CallOutcome } from '../../../kernel/calls/pipeline.js';
import type {
  McpTaskSupport,
  Presented,
  ProtocolErrorOutcome,
  ServingKernel,
  ToolResult,
} from '../../surface.js';
import { isExpired } from '../../../kernel/authority/consent.js';

/** Rounds one task may take (answers and approvals) before it ends with the last outcome. */
const MAX_ROUNDS = 16;
const POLL_MS = 150;
/** The least time between two progress writes of one task. */
const PROGRESS_MS = 250;

export interface TaskRound {
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
}

export interface TaskCall {
  task: TaskRecord;
  support: McpTaskSupport;
  /** The first round's input (what the tools/call carried). */
  first: TaskRound;
  /** The approval the call already asked for: the runner waits for it before the first round. */
  awaiting?: string;
  /** Where the web UI is (`http://host`), to link a pending approval; undefined on stdio. */
  origin: string | undefined;
  /** The owner's card for an approval when the server knows its address (preferred to `origin`). */
  link?: ((approvalId: string) => Promise<string | undefined>) | undefined;
  /**
   * A 2025-11-25 task (mcp-tasks-2025.ts): it has no `tasks/update`, so a
   * tool's own `input_required` round fails it instead of waiting.
   */
  legacy?: boolean;
  /**
   * One round of the call: the kernel's outcome and the door's presentation
   * of it. `progress` is what the tool reports (`ctx.progress`), shown as the
   * task's statusMessage.
   */
  run(
    round: TaskRound,
    signal: AbortSignal,
    progress: (progress: number, total?: number, message?: string) => Promise<void>,
  ): Promise<{ outcome: CallOutcome; presented: Presented }>;
}

/** Starts the runner job and records it on the task; resolves with the job id. */
export async function startTaskRunner(
  kernel: ServingKernel,
  tasks: TaskStore,
  call: TaskCall,
): Promise<string> {
  const { taskId } = call.task;
  const ctx: RunnerContext = { kernel, tasks, call };
  let progressAt = 0;
  // The runner is the task's agent's job: its events reach that agent's stream only.
  const runner = await kernel.jobs.seenBy(call.task.agent).start({
    door: call.task.mount,
    kind: 'mcp-task',
    input: { taskId, tool: call.task.tool },
    run: async (job) => {
      let round = call.first;
      if (call.awaiting && !(await waitForApproval(ctx, call.awaiting, job.signal)))
        return 'completed';
      for (let n = 1; ; n++) {
        const { outcome, presented } = await call.run(round, job.signal, progress);
        if (job.signal.aborted) throw new Error('cancelled');
        const last = n >= MAX_ROUNDS;
        const approvalId = outcome.ok ? null : pendingApproval(outcome);
        if (approvalId && !last) {
          if (!(await waitForApproval(ctx, approvalId, job.signal))) return 'completed';
          continue;
        }
        // Denied: the task fails with the owner's reason (issue 30), nothing ran.
        if (!outcome.ok && outcome.code === 'approvalDenied') {
          await tasks.advance(taskId, {
            status: 'failed',
            statusMessage: outcome.message,
            error: {
              code: -32603,
              message: outcome.message,
              data: { code: 'approvalDenied', ...outcome.data },
            },
          });
          return 'completed';
        }
        if ('protocolError' in presented) {
          const { protocolError } = presented as ProtocolErrorOutcome;
          await tasks.advance(taskId, {
            status: 'failed',
            statusMessage: protocolError.message,
            error: protocolError,
          });
          return 'completed';
        }
        const result = presented as ToolResult;
        if (result['resultType'] === 'input_required' && call.legacy) {
          const message = `${call.task.tool} asks the client for input, which a 2025-11-25 task cannot carry; call it again without "task".`;
          await tasks.advance(taskId, {
            status: 'failed',
            statusMessage: message,
            error: { code: -32603, message },
          });
          return 'completed';
        }
        if (result['resultType'] === 'input_required' && !last) {
          round = await waitForInput(ctx, result, job.signal);
          continue;
        }
        const started = outcome.ok && call.support.jobOf ? call.support.jobOf(outcome.value) : null;
        if (started) {
          await tasks.advance(taskId, { job: started, statusMessage: `job ${started} started` });
          return 'completed';
        }
        await tasks.advance(taskId, {
          status: 'completed',
          result,
          ...(result.isError ? { statusMessage: 'the tool reported an error' } : {}),
        });
        return result.isError ? 'completed_with_errors' : 'completed';
      }
    },
  });
  await tasks.advance(taskId, { runner });
  return runner;

  /** The tool's progress as the task's statusMessage, written at most every PROGRESS_MS. */
  async function progress(done: number, total?: number, message?: string) {
    const at = Date.now();
    if (at - progressAt < PROGRESS_MS) return;
    progressAt = at;
    const shown = message ?? (total ? `${done}/${total}` : String(done));
    await tasks.advance(taskId, { statusMessage: shown }).catch(() => undefined);
  }
}

/** What a task's runner works with: the kernel, the task store and the call. */
interface RunnerContext {
  kernel: ServingKernel;
  tasks: TaskStore;
  call: TaskCall;
}

/** Shows the task waiting for the owner's decision on an ask; true once approved or denied, false when it ended undecided. */
async function waitForApproval(
  { kernel, tasks, call }: RunnerContext,
  approvalId: string,
  signal: AbortSignal,
): Promise<boolean> {
  const message = approvalMessage(approvalId);
  const url =
    (await call.link?.(approvalId).catch(() => undefined)) ??
    (call.origin ? approvalUrl(call.origin, approvalId) : undefined);
  await tasks.advance(call.task.taskId, {
    status: 'input_required',
    statusMessage: message,
    waitingFor: 'approval',
    approvalId,
    inputRequests: url
      ? {
          approval: inputRequired.elicitUrl({ message, url }) as unknown as Record<string, unknown>,
        }
      : {},
  });
  // Decided on any instance (the event, or the store), or given up when the ask expires.
  // Cancelled by the agent (tasks/cancel): the ask leaves the owner's inbox (issue 30).
  const withdraw = () =>
    void kernel.consent.withdraw(approvalId, 'the agent cancelled its task').catch(() => undefined);
  signal.addEventListener('abort', withdraw, { once: true });
  try {
    return await waitForDecision({ kernel, tasks, call }, approvalId, signal);
  } finally {
    signal.removeEventListener('abort', withdraw);
  }
}

async function waitForDecision(
  { kernel, tasks, call }: RunnerContext,
  approvalId: string,
  signal: AbortSignal,
): Promise<boolean> {
  for (;;) {
    await decided(kernel, approvalId, 1000, signal);
    if (signal.aborted) throw new Error('cancelled');
    const ask = await kernel.store.read((tx) => tx.approvals.get(approvalId));
    if (ask?.status === 'approved' || ask?.status === 'denied') break;
    if (ask?.status === 'pending' && !isExpired(ask, Date.now())) continue;
    // Expired undecided (or withdrawn): the task ends with the ask, nothing ran.
    const gone = ask?.status === 'cancelled' ? 'was withdrawn' : 'expired';
    await tasks.advance(call.task.taskId, {
      ...working,
      status: 'failed',
      statusMessage: `request ${approvalId} ${gone} before the owner decided it`,
      error: {
        code: -32603,
        message: `Request ${approvalId} ${gone} before the owner decided it; nothing ran. Call ${call.task.tool} again to ask again.`,
        data: {
          reason: ask?.status === 'cancelled' ? 'cancelled' : 'expired',
          approvalID: approvalId,
        },
      },
    });
    return false;
  }
  if (signal.aborted) throw new Error('cancelled');
  await tasks.advance(call.task.taskId, working);
  return true;
}

/** Shows the task waiting for the client's input; resolves with the next round once tasks/update answered it. */
async function waitForInput(
  { tasks, call }: RunnerContext,
  presented: Record<string, unknown>,
  signal: AbortSignal,
): Promise<TaskRound> {
  const requestState =
    typeof presented['requestState'] === 'string' ? presented['requestState'] : undefined;
  await tasks.advance(call.task.taskId, {
    status: 'input_required',
    statusMessage: 'waiting for the client to answer inputRequests (tasks/update)',
    waitingFor: 'input',
    inputRequests: (presented['inputRequests'] ?? {}) as Record<string, unknown>,
    inputResponses: {},
  });
  // tasks/update (on any instance) moves the task back to `working` once every request is answered.
  for (;;) {
    await sleep(POLL_MS, signal);
    const task = await tasks.read(call.task.taskId);
    if (!task || isTerminal(task.status)) throw new Error('cancelled');
    if (task.status === 'working') {
      await tasks.advance(call.task.taskId, working);
      return { inputResponses: task.inputResponses ?? {}, requestState };
    }
  }
}

/** The fields a task drops when it goes back to work. */
const working: Partial<TaskRecord> = {
  status: 'working',
  statusMessage: undefined,
  waitingFor: undefined,
  approvalId: undefined,
  inputRequests: undefined,
  inputResponses: undefined,
  requestState: undefined,
};

/** Resolves after `ms`, or at once when `signal` aborts (leaving no listener behind). */
function pause(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

async function sleep(ms: number, signal: AbortSignal) {
  await pause(ms, signal);
  if (signal.aborted) throw new Error('cancelled');
}
