/**
 * Pipelines over REST: the engines and fonts available, starting a pipeline (as the
 * MCP tool, answered 202 with its job id), and the jobs it leaves behind.
 */
import { AirlockError, uuidString } from '../../../kernel/index.js';
import type { RestRoute } from '../../../transport/surface.js';
import { infoOf } from '../engines/registry.js';
import { defaultFont, fontFamilies } from '../files/images.js';
import { asTool, callTool, jobsSeenBy, ok, route, type RouteDeps } from './rest.js';

const isJobId = (id: string) => uuidString().safeParse(id).success;

export function pipelineRoutes(deps: RouteDeps): RestRoute[] {
  const { registry, names } = deps;
  return [
    route('GET', 'engines', 'Pipeline engines', async () =>
      ok({ engines: [...registry.values()].map(infoOf) }),
    ),
    route(
      'GET',
      'fonts',
      "Fonts the renderer can use (installed on the server) → {fonts, defaultFont}; name one in a text style's fontFamilies, in defaultFont of start_pipeline, or in the project's style",
      async () =>
        ok({
          fonts: [...new Set(fontFamilies())].sort((a, b) => a.localeCompare(b)),
          defaultFont: defaultFont(),
        }),
    ),
    route('POST', 'pipelines', 'Start a pipeline → {jobId}', async (req) =>
      asTool(deps, req, names.startPipeline, req.body ?? {}, 202),
    ),
    // An agent finds only the jobs it started; the owner every one.
    route('GET', 'operations', 'Pipeline jobs, newest first', async (req) =>
      ok({ operations: await jobsSeenBy(deps, req).list({ door: 'scene' }) }),
    ),
    route('GET', 'operations/{id}', 'One pipeline job', async (req) => {
      const job = await jobsSeenBy(deps, req).get(req.params.id ?? '');
      if (!job)
        throw new AirlockError(
          'notFound',
          `No operation ${req.params.id}; GET /api/v1/operations lists them.`,
        );
      return ok(job);
    }),
    route('DELETE', 'operations/{id}', 'Cancel a pipeline job (404 when unknown)', async (req) => {
      const id = req.params.id ?? '';
      const unknown = () =>
        new AirlockError('notFound', `No operation ${id}; GET /api/v1/operations lists them.`);
      // Job ids are UUIDs: any other id names no job (404, as before it ran as a tool).
      if (!isJobId(id)) throw unknown();
      // Koharu's cancel_job, so the policy and the audit see the cancellation.
      const cancelled = await callTool(deps, req, names.cancelJob, { jobId: id });
      if (!cancelled.ok) return cancelled.code === 'notFound' ? unknown().toFailure() : cancelled;
      const { jobId, ...rest } = cancelled.value as { jobId: string };
      return ok({ id: jobId, ...rest });
    }),
  ];
}
