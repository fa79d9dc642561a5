/**
 * The UI's one live state: pending approvals, active grants and jobs, kept
 * current from the event stream (a `snapshot` reloads everything; later
 * events update it in place). Screens subscribe and re-render what changed.
 */
import type { Approval, Grant, Job } from '../../kernel/records.js';
import { get } from './api.js';
import { showError } from './errors.js';
import type { LiveEvent } from './event-stream.js';

export type Topic = 'approvals' | 'grants' | 'jobs' | 'event';

export interface LiveState {
  approvals: Approval[];
  grants: Grant[];
  jobs: Map<string, Job>;
  /** The last event, for screens that react to door events (sceneChanged, auditRecorded). */
  lastEvent: LiveEvent | null;
}

const state: LiveState = { approvals: [], grants: [], jobs: new Map(), lastEvent: null };
const listeners = new Map<Topic, Set<() => void>>();

export function live(): LiveState {
  return state;
}

/** Forgets everything (the owner signed out); the next stream's snapshot loads it again. */
export function resetLive(): void {
  state.approvals = [];
  state.grants = [];
  state.jobs = new Map();
  state.lastEvent = null;
  emit('approvals');
  emit('grants');
  emit('jobs');
}

export function subscribe(topic: Topic, fn: () => void): () => void {
  let set = listeners.get(topic);
  if (!set) listeners.set(topic, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

function emit(topic: Topic): void {
  for (const fn of listeners.get(topic) ?? []) {
    try {
      fn();
    } catch (e) {
      showError(e, 'The page could not update');
    }
  }
}

export async function refreshConsent(): Promise<void> {
  try {
    const [a, g] = await Promise.all([
      get<{ approvals: Approval[] }>('approvals'),
      get<{ grants: Grant[] }>('grants'),
    ]);
    state.approvals = a.approvals;
    state.grants = g.grants;
  } catch (e) {
    showError(e, 'Could not load approvals');
  }
  emit('approvals');
  emit('grants');
}

export async function refreshJobs(): Promise<void> {
  try {
    const { jobs } = await get<{ jobs: Job[] }>('jobs');
    state.jobs = new Map(jobs.map((j) => [j.id, j]));
  } catch (e) {
    showError(e, 'Could not load jobs');
  }
  emit('jobs');
}

async function refreshJob(id: string): Promise<void> {
  try {
    state.jobs.set(id, await get<Job>(`jobs/${encodeURIComponent(id)}`));
    emit('jobs');
  } catch {
    // the job list refresh on the next snapshot covers it
  }
}

const num = (v: unknown, fallback: number) => (typeof v === 'number' ? v : fallback);

/** Applies a jobProgress event to the job it names (unit counters may be named per door, e.g. currentPage). */
export function applyProgress(job: Job, e: LiveEvent): Job {
  const p = job.progress;
  const current = e.currentUnit ?? e.currentPage;
  const total = e.totalUnits ?? e.totalPages;
  return {
    ...job,
    status: job.status === 'queued' ? 'running' : job.status,
    progress: {
      step: typeof e.step === 'string' ? e.step : p.step,
      currentUnit: num(current, p.currentUnit),
      totalUnits: num(total, p.totalUnits),
      currentStepIndex: num(e.currentStepIndex, p.currentStepIndex),
      totalSteps: num(e.totalSteps, p.totalSteps),
      overallPercent: num(e.overallPercent, p.overallPercent),
    },
  };
}

export function handleEvent(e: LiveEvent): void {
  state.lastEvent = e;
  switch (e.event) {
    case 'snapshot':
      void refreshConsent();
      void refreshJobs();
      break;
    case 'approvalRequested':
    case 'approvalDecided':
    case 'approvalOrphaned':
    case 'grantRevoked':
      void refreshConsent();
      break;
    case 'jobStarted':
      void refreshJob(String(e.id));
      break;
    case 'jobProgress': {
      const job = state.jobs.get(String(e.jobId));
      if (job) {
        state.jobs.set(job.id, applyProgress(job, e));
        emit('jobs');
      } else void refreshJob(String(e.jobId));
      break;
    }
    case 'jobWarning': {
      const job = state.jobs.get(String(e.jobId));
      if (job) {
        const { event: _e, jobId: _j, message, ...where } = e;
        job.warnings = [...job.warnings, { at: Date.now(), where, message: String(message) }];
        emit('jobs');
      }
      break;
    }
    case 'jobFinished': {
      const job = state.jobs.get(String(e.id));
      if (job) {
        job.status = e.status as Job['status'];
        job.error = typeof e.error === 'string' ? e.error : null;
        if (job.status === 'completed') job.progress = { ...job.progress, overallPercent: 100 };
        emit('jobs');
      }
      void refreshJob(String(e.id));
      break;
    }
  }
  emit('event');
}
