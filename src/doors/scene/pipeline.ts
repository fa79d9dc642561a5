/**
 * Pipeline runs (spec/scene.md "Pipeline") on the kernel job registry, so a
 * run started over MCP, REST or the UI emits the same events. Steps are
 * planned and checked before the job exists; then each step runs over the
 * pages in order, each page's output applied as one history step (one undo
 * reverts it). A page that fails a step gets a `jobWarning` and skips its
 * later steps; the job then ends `completed_with_errors`. Cancellation is
 * checked between pages and reaches the engine through the signal.
 */
import { z } from 'zod';
import {
  AirlockError,
  utf8String,
  uuidString,
  type Job,
  type JobContext,
  type JobOutcome,
  type JobView,
  type ResumedJob,
} from '../../kernel/index.js';
import {
  planSteps,
  type Engine,
  type EngineRegistry,
  type EngineRun,
  type PipelineOptions,
} from './engines/registry.js';
import type { Project } from './project/project.js';
import { projectIdOf } from './project/shelf.js';
import { SourceLanguage } from './model/model.js';
import type { SceneSession } from './session.js';

export const PipelineInput = z
  .object({
    steps: z.array(z.string().min(1).max(64)).min(1).max(16),
    pages: z.array(uuidString()).max(10_000).optional(),
    sourceLanguage: SourceLanguage.optional(),
    targetLanguage: utf8String(1, 64).optional(),
    systemPrompt: utf8String(1, 8000).optional(),
    defaultFont: utf8String(1, 200).optional(),
    textNodeIds: z.array(uuidString()).max(10_000).optional(),
  })
  .strict();
export type PipelineInput = z.output<typeof PipelineInput>;

export interface PipelineDeps {
  session: SceneSession;
  registry: EngineRegistry;
  jobs: JobView;
}

/**
 * What a resumed run needs besides the input (scale-out only, so an
 * embedded job's record is as it always was): the project's id and the
 * pages as planned.
 */
const ResumePoint = z.object({ project: z.string(), pages: z.array(z.string()) });
const StoredPipeline = z.object({
  steps: z.array(z.string()),
  sourceLanguage: SourceLanguage,
  targetLanguage: z.string().optional(),
  systemPrompt: z.string().optional(),
  defaultFont: z.string().optional(),
  textNodeIds: z.array(z.string()).optional(),
  projectFont: z.string().optional(),
  resume: ResumePoint,
});

const UNIT_NAMES = { current: 'currentPage', total: 'totalPages' };

interface Plan {
  project: Project;
  engines: Engine[];
  pageIds: string[];
  options: PipelineOptions;
}

export async function startPipeline(
  { session, registry, jobs }: PipelineDeps,
  input: PipelineInput,
): Promise<{ jobId: string }> {
  const project = session.require();
  const scene = project.history.state;
  const pages = input.pages
    ? input.pages.map((id) => {
        const page = scene.pages.find((p) => p.id === id);
        if (!page)
          throw new AirlockError(
            'notFound',
            `No page ${id} in the project; read the scene (get_scene) for page ids.`,
            { field: 'pages', page: id },
          );
        return page;
      })
    : scene.pages;
  const engines = planSteps(registry, input.steps, pages);
  const pageIds = pages.map((p) => p.id);
  const options = {
    sourceLanguage: input.sourceLanguage ?? scene.project.style.sourceLanguage ?? 'en',
    targetLanguage: input.targetLanguage,
    systemPrompt: input.systemPrompt,
    defaultFont: input.defaultFont,
    textNodeIds: input.textNodeIds,
    projectFont: scene.project.style.defaultFont,
  };
  const plan: Plan = { project, engines, pageIds, options };
  const jobId = await jobs.start({
    door: 'scene',
    kind: 'pipeline',
    // What the job cards show: the project and the ordered steps.
    input: {
      ...input,
      steps: engines.map((e) => e.id),
      project: scene.project.name,
      // Scale-out: what another instance needs to resume the run if this one dies.
      ...(session.shared
        ? {
            sourceLanguage: options.sourceLanguage,
            ...(options.projectFont ? { projectFont: options.projectFont } : {}),
            resume: { project: projectIdOf(project.dir), pages: pageIds },
          }
        : {}),
    },
    unitNames: UNIT_NAMES,
    run: (job) => runPipeline(session, plan, job, new Set()),
  });
  return { jobId };
}

/**
 * The run that resumes a pipeline a dead instance left (scale-out; kernel
 * §8 "or resumed, where the door can"): the same steps over the same pages,
 * where each page's batch a step logged already (found by its tag in the
 * shared history) is skipped, and pages that failed before stay failed.
 * Null when the job is not a pipeline that can be resumed here.
 */
export function resumePipeline(
  { session, registry }: Omit<PipelineDeps, 'jobs'>,
  job: Job,
): ResumedJob | null {
  if (!session.shared || job.kind !== 'pipeline') return null;
  const stored = StoredPipeline.safeParse(job.input);
  if (!stored.success) return null;
  const { steps, resume, ...rest } = stored.data;
  const engines = steps.map((id) => registry.get(id));
  if (engines.some((e) => e === undefined)) return null;
  const failed = new Set<string>();
  for (const warning of job.warnings) {
    if (warning.where.skipped !== undefined) continue; // said, not failed
    const index = warning.where.pageIndex;
    if (typeof index === 'number' && resume.pages[index]) failed.add(resume.pages[index]);
  }
  const run: ResumedJob['run'] = async (ctx) => {
    await session.sync();
    const project = session.current();
    // By id: each instance has the project at its own data folder's path.
    if (!project || projectIdOf(project.dir) !== resume.project)
      throw new AirlockError(
        'noProject',
        'The project was closed while the pipeline ran; open it again and start the pipeline again.',
      );
    const options: PipelineOptions = rest;
    const plan = { project, engines: engines as Engine[], pageIds: resume.pages, options };
    return runPipeline(session, plan, ctx, failed);
  };
  return { run, unitNames: UNIT_NAMES };
}

/** The tag of one step's batch for one page of one run (scale-out), so a resumed run makes it once. */
const pageTag = (jobId: string, step: number, pageId: string) =>
  `pipeline:${jobId}:${step}:${pageId}`;

async function runPipeline(
  session: SceneSession,
  { project, engines, pageIds, options }: Plan,
  job: JobContext,
  failed: Set<string>,
): Promise<JobOutcome> {
  const totalSteps = engines.length;
  const totalUnits = pageIds.length;
  const stop = () => {
    if (job.signal.aborted) throw new Error('cancelled');
  };
  for (const [s, engine] of engines.entries()) {
    stop();
    job.progress({ step: engine.id, currentUnit: 0, totalUnits, currentStepIndex: s, totalSteps });
    let runner: EngineRun | null = null;
    let startError: unknown = null;
    try {
      runner = await engine.start(options);
    } catch (error) {
      startError = error;
    }
    try {
      for (const [i, pageId] of pageIds.entries()) {
        stop();
        const tag = session.shared ? pageTag(job.id, s, pageId) : undefined;
        const done = tag !== undefined && project.history.epochOf(tag) !== null;
        if (!failed.has(pageId) && !done) {
          try {
            if (startError) throw startError;
            const page = project.history.state.pages.find((p) => p.id === pageId);
            if (!page) throw new Error('the page was removed while the pipeline ran');
            const ops = await runner!.page({
              page,
              pageIndex: i,
              blobs: project.blobs,
              signal: job.signal,
              traceHeaders: job.traceContext(),
              pages: project.history.state.pages,
              skipped: (reason, message, where) =>
                job.warn({ pageIndex: i, stepId: engine.id, skipped: reason, ...where }, message),
            });
            stop();
            const label = `${engine.id}: ${page.name}`;
            if (ops.length && tag !== undefined)
              await session.applyTagged(project, ops, label, tag);
            else if (ops.length) await session.applyOn(project, ops, label);
          } catch (error) {
            if (job.signal.aborted) throw error;
            if (error instanceof AirlockError && error.code === 'noProject') throw error;
            failed.add(pageId);
            job.warn(
              { pageIndex: i, stepId: engine.id },
              error instanceof Error ? error.message : String(error),
            );
          }
        }
        job.progress({
          step: engine.id,
          currentUnit: i + 1,
          totalUnits,
          currentStepIndex: s,
          totalSteps,
        });
      }
    } finally {
      await runner?.close?.();
    }
  }
  return failed.size ? 'completed_with_errors' : 'completed';
}
