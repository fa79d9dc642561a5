/**
 * Background jobs (spec/kernel.md §8). `start` returns a job id at once; the
 * run function gets an AbortSignal, a progress reporter and a warning sink.
 * Every job, whichever route started it, goes through this registry and emits
 * the same events: `jobStarted {id, kind}`, `jobProgress {jobId, ...}`,
 * `jobWarning {jobId, ...where, message}`, `jobFinished {id, status, error?}`.
 * Jobs are persisted, and the instance running one touches it every 5 s
 * (a heartbeat). Any instance on the store fails a queued or running job
 * whose heartbeat is older than the lease (30 s) with error `interrupted` —
 * at start-up and every 10 s — so starting an instance never fails another
 * live instance's jobs, and a dead instance's jobs do not stay `running`.
 * A door that can resume a job of its own (`resume`: the scene door's
 * pipelines, from the last finished page and step) gets it instead: the
 * first instance whose conditional take-over succeeds in the store runs it
 * on (no second `jobStarted`); every other job ends `interrupted`.
 * Cancelling a job another instance runs travels over the bus
 * (`jobCancelRequested`); a job whose heartbeat stopped is cancelled at once.
 * Every save after the first is conditional on the job being unfinished in
 * the store, so a job is finished — and `jobFinished` announced — exactly
 * once, even when a stalled instance comes back after its job was failed.
 *
 * A job belongs to the agent that started it (authority.md §1, issue 24):
 * `seenBy(agent)` is the registry as that agent sees it — it lists, reads
 * and cancels only its own jobs, and another agent's job answers as an
 * unknown id does; `seenBy(null)` (the owner, internal calls) sees every
 * job. Job events carry the job's `agent` so streams can be filtered the
 * same way (transport/http/sse.ts).
 */
import { randomUUID } from 'node:crypto';
import type { EventBus } from './events/events.js';
import type { Job, JobProgress, JobStatus } from './records.js';
import { ONE_STATEMENT, type JobQuery, type Store } from './store.js';
import type { Logger } from './logger.js';
import type { CallObserver } from './calls/observe.js';

export interface ProgressUpdate {
  step?: string | null;
  currentUnit?: number;
  totalUnits?: number;
  currentStepIndex?: number;
  totalSteps?: number;
  /** Computed from units and steps when omitted. */
  overallPercent?: number;
}

export interface JobContext {
  readonly id: string;
  readonly signal: AbortSignal;
  /**
   * The run's trace context as W3C headers (`traceparent`, `tracestate`)
   * for the job's outbound requests (an LLM endpoint); {} when not traced.
   */
  traceContext(): Record<string, string>;
  progress(update: ProgressUpdate): void;
  warn(where: Record<string, unknown>, message: string): void;
}

/** What a run ends with; a throw means `failed`, an abort means `cancelled`. */
export type JobOutcome = 'completed' | 'completed_with_errors';

export interface JobSpec {
  door: string;
  kind: string;
  input?: unknown;
  /** The agent starting the job (its owner among agents); null or absent: the owner or Airlock itself. */
  agent?: string | null;
  /** Event field names for the unit counters (e.g. pages: currentPage/totalPages). */
  unitNames?: { current: string; total: string };
  run(ctx: JobContext): Promise<JobOutcome>;
}

/**
 * The jobs as one principal sees them: an agent starts jobs that are its
 * own and finds only those; the owner finds every job.
 */
export interface JobView {
  start(spec: Omit<JobSpec, 'agent'>): Promise<string>;
  /** Null when unknown, or another agent's. */
  get(id: string): Promise<Job | null>;
  list(query?: Omit<JobQuery, 'agent'>): Promise<Job[]>;
  /** Requests cancellation; false when the job is unknown, another agent's or already finished. */
  cancel(id: string): Promise<boolean>;
}

/** The registry; its own `start`/`get`/`list`/`cancel` are the owner's view (every job). */
export interface JobRegistry {
  start(spec: JobSpec): Promise<string>;
  get(id: string): Promise<Job | null>;
  list(query?: JobQuery): Promise<Job[]>;
  /** Requests cancellation; false when the job is unknown or already finished. */
  cancel(id: string): Promise<boolean>;
  /** The registry as `agent` sees it (null: the owner, every job). */
  seenBy(agent: string | null): JobView;
  /** Resolves when the job has finished (for tests and shutdown). */
  settled(id: string): Promise<void>;
  /** Marks jobs left unfinished by a previous process as interrupted. */
  recover(): Promise<Job[]>;
  /** Cancels running jobs and waits for them. */
  close(): Promise<void>;
}

export interface JobRegistryOptions {
  store: Store;
  events: EventBus;
  logger: Logger;
  now?: () => number;
  /** A job whose heartbeat is older than this is its instance's no more (default 30 s). */
  leaseMs?: number;
  /**
   * The run that resumes a job a dead instance left (from its stored input,
   * progress and warnings), or null when it cannot be resumed.
   */
  resume?: (job: Job) => ResumedJob | null;
  /** Hears each run (a tracer gives it a span linked to the call that started it). */
  observer?: CallObserver | undefined;
}

/** How a door goes on with a job another instance left: its run, and its unit names. */
export type ResumedJob = Pick<JobSpec, 'run' | 'unitNames'>;

export const JOB_LEASE_MS = 30_000;

const FINAL: ReadonlySet<JobStatus> = new Set([
  'completed',
  'completed_with_errors',
  'cancelled',
  'failed',
]);

/** The `agent` field of a job's events: present when an agent started the job. */
const whose = (job: Pick<Job, 'agent'>) => (job.agent === null ? {} : { agent: job.agent });

export function percentOf(p: JobProgress): number {
  if (p.totalSteps <= 0) return 0;
  const unitShare = p.totalUnits > 0 ? p.currentUnit / p.totalUnits : 0;
  return Math.min(100, Math.round(((p.currentStepIndex + unitShare) / p.totalSteps) * 1000) / 10);
}

/** What a job's run needs of its registry. */
interface RunDeps {
  store: Store;
  events: EventBus;
  logger: JobRegistryOptions['logger'];
  now: () => number;
  leaseMs: number;
  observer: JobRegistryOptions['observer'];
}

/** A new job's record, queued, with no progress yet. */
function queuedJob(spec: JobSpec, at: number): Job {
  return {
    id: randomUUID(),
    door: spec.door,
    kind: spec.kind,
    status: 'queued',
    progress: {
      step: null,
      currentUnit: 0,
      totalUnits: 0,
      currentStepIndex: 0,
      totalSteps: 0,
      overallPercent: 0,
    },
    warnings: [],
    error: null,
    input: spec.input ?? null,
    agent: spec.agent ?? null,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Runs `spec` for `job` on this instance: saves its progress (coalesced, one
 * save at a time), beats its heartbeat, and announces its end once the store
 * has it — unless another instance finished it meanwhile.
 */
async function runJob(d: RunDeps, job: Job, spec: JobSpec, abort: AbortController): Promise<void> {
  const { store, events, logger, now, leaseMs, observer } = d;
  const names = spec.unitNames ?? { current: 'currentUnit', total: 'totalUnits' };
  // Lost: the store has finished the job already (another instance failed it
  // `interrupted` while this one stalled past the lease, or cancelled it):
  // this run stops and leaves the store and the one jobFinished alone.
  let lost = false;
  // The last save of this run: a save is made only over it, so once another
  // instance took the job over (and saved it), this run's saves fail and it stops.
  let saved = job.updatedAt;
  const keep = async (snapshot: Job) => {
    if (lost) return;
    if (await store.transaction((tx) => tx.jobs.updateUnfinished(snapshot, saved))) {
      saved = snapshot.updatedAt;
      return;
    }
    lost = true;
    logger.warn({ jobId: job.id }, 'job was finished elsewhere; stopping this run');
    abort.abort(new Error('interrupted'));
  };
  // One save at a time, of the newest state: progress faster than the store
  // writes coalesces, so the heartbeat never queues behind stale saves.
  let next: Job | undefined;
  let writing: Promise<void> | undefined;
  const drain = async () => {
    while (next) {
      const snapshot = next;
      next = undefined;
      await keep(snapshot).catch((e) => logger.error({ err: e }, 'job save failed'));
    }
    writing = undefined;
  };
  const persist = () => {
    next = structuredClone(job);
    writing ??= drain();
  };
  const ctx: JobContext = {
    id: job.id,
    signal: abort.signal,
    traceContext: () => observer?.carrier() ?? {},
    progress(update) {
      const p = { ...job.progress, ...update } as JobProgress;
      p.overallPercent = update.overallPercent ?? percentOf(p);
      job.progress = p;
      job.updatedAt = now();
      events.publish({
        event: 'jobProgress',
        jobId: job.id,
        step: p.step,
        [names.current]: p.currentUnit,
        [names.total]: p.totalUnits,
        currentStepIndex: p.currentStepIndex,
        totalSteps: p.totalSteps,
        overallPercent: p.overallPercent,
        ...whose(job),
      });
      persist();
    },
    warn(where, message) {
      job.warnings.push({ at: now(), where, message });
      events.publish({ event: 'jobWarning', jobId: job.id, ...where, message, ...whose(job) });
      persist();
    },
  };
  job.status = 'running';
  job.updatedAt = now();
  persist();
  // The heartbeat: other instances see this job is alive.
  const heartbeat = setInterval(
    () => {
      job.updatedAt = now();
      persist();
    },
    Math.max(50, Math.floor(leaseMs / 6)),
  );
  heartbeat.unref();
  let status: JobStatus;
  let error: string | null = null;
  try {
    // Started from the call's context (launch runs in it), so an observer can link the two.
    const info = { door: job.door, kind: job.kind, id: job.id };
    const outcome = await (observer?.job ? observer.job(info, () => spec.run(ctx)) : spec.run(ctx));
    status = abort.signal.aborted ? 'cancelled' : outcome;
  } catch (e) {
    if (abort.signal.aborted) status = 'cancelled';
    else {
      status = 'failed';
      error = e instanceof Error ? e.message : String(e);
      logger.warn({ jobId: job.id, err: e }, 'job failed');
    }
  }
  clearInterval(heartbeat);
  job.status = status;
  job.error = error;
  if (status === 'completed') job.progress = { ...job.progress, overallPercent: 100 };
  job.updatedAt = now();
  // The final state must reach the store before jobFinished is announced;
  // a store hiccup is retried while the lease would still be ours.
  next = undefined;
  await writing;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await keep(structuredClone(job));
      break;
    } catch (e) {
      if (attempt >= 5) {
        logger.error({ err: e, jobId: job.id }, 'job final save failed');
        return;
      }
      await new Promise((r) => setTimeout(r, Math.min(leaseMs / 10, 1_000)));
    }
  }
  if (lost) return;
  events.publish(
    error === null
      ? { event: 'jobFinished', id: job.id, status, ...whose(job) }
      : { event: 'jobFinished', id: job.id, status, error, ...whose(job) },
  );
}

export function createJobRegistry({
  store,
  events,
  logger,
  now = Date.now,
  leaseMs = JOB_LEASE_MS,
  resume,
  observer,
}: JobRegistryOptions): JobRegistry {
  const running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  let sweeper: NodeJS.Timeout | undefined;
  const deps: RunDeps = { store, events, logger, now, leaseMs, observer };

  // A cancel asked on another instance reaches the one running the job.
  const unsubscribe = events.subscribe(
    ({ data }) => {
      if (data.event === 'jobCancelRequested' && typeof data.id === 'string')
        running.get(data.id)?.abort.abort(new Error('cancelled'));
    },
    { events: ['jobCancelRequested'] },
  );

  /** Runs `spec` for `job` here, from the next tick; `start` answers at once. */
  const launch = (job: Job, spec: JobSpec) => {
    const abort = new AbortController();
    const done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => runJob(deps, job, spec, abort))
      .finally(() => running.delete(job.id));
    running.set(job.id, { abort, done });
  };

  /** Takes over the stale jobs a door can resume; true for each one this instance now runs. */
  const takeOverStale = async (at: number) => {
    if (!resume) return;
    const unfinished = await store.read((tx) => tx.jobs.list({ status: ['queued', 'running'] }));
    for (const stale of unfinished) {
      if (stale.updatedAt >= at - leaseMs || running.has(stale.id)) continue;
      const resumed = resume(stale);
      if (!resumed) continue;
      const job: Job = { ...stale, status: 'running', updatedAt: now() };
      if (!(await store.transaction((tx) => tx.jobs.takeOver(job, at - leaseMs)))) continue;
      logger.info({ jobId: job.id, door: job.door, kind: job.kind }, 'job taken over');
      launch(job, { door: job.door, kind: job.kind, ...resumed });
    }
  };

  /** Fails the jobs whose heartbeat stopped (a dead instance's), announcing each. */
  const interruptStale = async () => {
    const at = now();
    await takeOverStale(at);
    const jobs = await store.transaction((tx) => tx.jobs.interruptUnfinished(at, at - leaseMs));
    for (const job of jobs)
      events.publish({
        event: 'jobFinished',
        id: job.id,
        status: 'failed',
        error: 'interrupted',
        ...whose(job),
      });
    return jobs;
  };

  const save = (job: Job) => store.transaction((tx) => tx.jobs.put(job));

  const registry: JobRegistry = {
    async start(spec) {
      const job = queuedJob(spec, now());
      await save(job);
      events.publish({ event: 'jobStarted', id: job.id, kind: job.kind, ...whose(job) });
      launch(job, spec);
      return job.id;
    },
    get: (id) => store.read((tx) => tx.jobs.get(id), ONE_STATEMENT),
    list: (query) => store.read((tx) => tx.jobs.list(query)),
    async cancel(id) {
      const entry = running.get(id);
      if (entry) {
        entry.abort.abort(new Error('cancelled'));
        return true;
      }
      const job = await store.read((tx) => tx.jobs.get(id));
      if (!job || isFinal(job.status)) return false;
      // Its instance stopped heartbeating: cancel it here, once (the store decides).
      if (now() - job.updatedAt > leaseMs) {
        const at = now();
        const cancelled = { ...job, status: 'cancelled' as const, updatedAt: at };
        if (!(await store.transaction((tx) => tx.jobs.updateUnfinished(cancelled)))) return false;
        events.publish({ event: 'jobFinished', id, status: 'cancelled', ...whose(job) });
        return true;
      }
      // Running on another instance: ask it over the bus.
      events.publish({ event: 'jobCancelRequested', id, ...whose(job) });
      return true;
    },
    async settled(id) {
      await running.get(id)?.done;
    },
    async recover() {
      const jobs = await interruptStale();
      sweeper = setInterval(
        () => void interruptStale().catch((err) => logger.warn({ err }, 'stale job sweep failed')),
        Math.max(50, Math.floor(leaseMs / 3)),
      );
      sweeper.unref();
      return jobs;
    },
    async close() {
      clearInterval(sweeper);
      unsubscribe();
      for (const { abort } of running.values()) abort.abort(new Error('shutting down'));
      await Promise.allSettled([...running.values()].map((r) => r.done));
    },
    seenBy: (agent) => (agent === null ? registry : agentView(registry, agent)),
  };
  return registry;
}

/**
 * What one agent finds: the jobs it started. Another agent's job is absent,
 * exactly as an unknown id is, so an id says nothing of who owns it.
 */
function agentView(registry: JobRegistry, agent: string): JobView {
  const own = async (id: string) => {
    const job = await registry.get(id);
    return job?.agent === agent ? job : null;
  };
  return {
    start: (spec) => registry.start({ ...spec, agent }),
    get: own,
    list: (query) => registry.list({ ...query, agent }),
    async cancel(id) {
      return (await own(id)) !== null && registry.cancel(id);
    },
  };
}

export function isFinal(status: JobStatus): boolean {
  return FINAL.has(status);
}
