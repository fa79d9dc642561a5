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
import { AirlockError, utf8String, uuidString, type JobRegistry } from '../../kernel/index.js';
import { planSteps, type EngineRegistry, type EngineRun } from './engines/registry.js';
import { SourceLanguage } from './model.js';
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
  jobs: JobRegistry;
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
  const jobId = await jobs.start({
    door: 'scene',
    kind: 'pipeline',
    // What the job cards show: the project and the ordered steps.
    input: { ...input, steps: engines.map((e) => e.id), project: scene.project.name },
    unitNames: { current: 'currentPage', total: 'totalPages' },
    run: async (job) => {
      const failed = new Set<string>();
      const totalSteps = engines.length;
      const totalUnits = pageIds.length;
      const stop = () => {
        if (job.signal.aborted) throw new Error('cancelled');
      };
      for (const [s, engine] of engines.entries()) {
        stop();
        job.progress({
          step: engine.id,
          currentUnit: 0,
          totalUnits,
          currentStepIndex: s,
          totalSteps,
        });
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
            if (!failed.has(pageId)) {
              try {
                if (startError) throw startError;
                const page = project.history.state.pages.find((p) => p.id === pageId);
                if (!page) throw new Error('the page was removed while the pipeline ran');
                const ops = await runner!.page({
                  page,
                  pageIndex: i,
                  blobs: project.blobs,
                  signal: job.signal,
                  pages: project.history.state.pages,
                });
                stop();
                if (ops.length) await session.applyOn(project, ops, `${engine.id}: ${page.name}`);
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
    },
  });
  return { jobId };
}
