/**
 * Jobs from every route (MCP, REST, this UI) with a live progress bar each,
 * their warnings, and cancel (spec/kernel.md §8).
 */
import type { Job } from '../../../kernel/records.js';
import { del } from '../api.js';
import { busy, fill, h, keyed, onOwner } from '../dom.js';
import { percent, time } from '../format.js';
import { live, subscribe } from '../live.js';
import type { Screen } from './screen.js';

const ACTIVE = new Set(['queued', 'running']);
const STATUS_TEXT: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  completed: 'Finished',
  completed_with_errors: 'Finished with errors',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

/** Where a warning happened, in words: "page 2, step llm" (0-based indexes shown 1-based). */
export function whereText(where: Record<string, unknown>): string {
  return Object.entries(where)
    .map(([k, v]) => {
      if (k === 'pageIndex' && typeof v === 'number') return `page ${v + 1}`;
      if (k === 'stepId') return `step ${String(v)}`;
      return `${k} ${String(v)}`;
    })
    .join(', ');
}

/** What a job works on, from its input: "Comic · tesseract → fill" (project and steps). */
export function jobSubject(input: unknown): string {
  if (typeof input !== 'object' || input === null) return '';
  const { project, steps } = input as { project?: unknown; steps?: unknown };
  const parts: string[] = [];
  if (typeof project === 'string' && project) parts.push(project);
  if (Array.isArray(steps) && steps.every((s) => typeof s === 'string'))
    parts.push(steps.join(' → '));
  return parts.join(' · ');
}

export function jobCard(job: Job): HTMLElement {
  const titleId = `job-${job.id}-title`;
  const el = h(
    'li',
    { class: 'card job', 'data-job-id': job.id, 'aria-labelledby': titleId },
    h('h3', { id: titleId }, `${job.door} · ${job.kind}`),
    ...(jobSubject(job.input) ? [h('p', { class: 'subject' }, jobSubject(job.input))] : []),
    h(
      'p',
      { class: 'meta' },
      `Started ${time(job.createdAt)} · `,
      h('span', { class: 'job-id' }, job.id),
    ),
    h('progress', { max: 100, value: 0, 'aria-labelledby': titleId }),
    h(
      'p',
      { class: 'meta' },
      h('span', { class: 'status' }),
      ' · ',
      h('span', { class: 'percent' }),
      h('span', { class: 'step' }),
    ),
    h('p', { class: 'result-err job-error' }),
    h('ul', { class: 'warnings', 'aria-label': 'Warnings' }),
    h('div', { class: 'row' }),
  );
  updateJobCard(el, job);
  return el;
}

export function updateJobCard(el: HTMLElement, job: Job): void {
  const p = job.progress;
  const bar = el.querySelector('progress')!;
  bar.value = p.overallPercent;
  bar.setAttribute(
    'aria-valuetext',
    `${percent(p.overallPercent)}, ${STATUS_TEXT[job.status] ?? job.status}`,
  );
  const status = el.querySelector<HTMLElement>('.status')!;
  status.textContent = STATUS_TEXT[job.status] ?? job.status;
  status.className = `status status-${job.status}`;
  el.dataset.status = job.status;
  el.querySelector('.percent')!.textContent = percent(p.overallPercent);
  const units = p.totalUnits > 0 ? ` ${p.currentUnit}/${p.totalUnits}` : '';
  const steps = p.totalSteps > 1 ? ` (step ${p.currentStepIndex + 1} of ${p.totalSteps})` : '';
  el.querySelector('.step')!.textContent = p.step ? ` · ${p.step}${units}${steps}` : '';
  el.querySelector('.job-error')!.textContent = job.error ? `Error: ${job.error}` : '';
  const warnings = el.querySelector<HTMLElement>('.warnings')!;
  if (warnings.children.length !== job.warnings.length)
    fill(
      warnings,
      ...job.warnings.map((w) => {
        const where = whereText(w.where);
        return h('li', {}, where ? `${where}: ${w.message}` : w.message);
      }),
    );
  const actions = el.querySelector<HTMLElement>('.row')!;
  const active = ACTIVE.has(job.status);
  const cancel = actions.querySelector('button');
  if (active && !cancel) {
    const button = h(
      'button',
      { type: 'button', class: 'danger', 'aria-label': `Cancel job ${job.kind}` },
      'Cancel',
    );
    onOwner(
      button,
      'click',
      () =>
        void busy(button, async () => {
          try {
            await del(`jobs/${encodeURIComponent(job.id)}`);
          } catch (e) {
            el.querySelector('.job-error')!.textContent = (e as Error).message;
          }
        }),
    );
    actions.append(button);
  } else if (!active && cancel) cancel.remove();
}

/** Renders the given jobs (newest first) into a list, live. */
export function jobList(filter: (job: Job) => boolean = () => true): {
  el: HTMLElement;
  stop: () => void;
} {
  const list = h('ul', { class: 'cards', 'aria-label': 'Jobs' });
  const empty = h('p', { class: 'empty' }, 'No jobs yet.');
  const render = () => {
    const jobs = [...live().jobs.values()].filter(filter).sort((a, b) => b.createdAt - a.createdAt);
    empty.hidden = jobs.length > 0;
    keyed(list, jobs, (j) => j.id, jobCard, updateJobCard);
  };
  render();
  return { el: h('div', {}, empty, list), stop: subscribe('jobs', render) };
}

export const jobsScreen: Screen = (root) => {
  const { el, stop } = jobList();
  fill(root, h('h1', { tabindex: '-1' }, 'Jobs'), el);
  return stop;
};
