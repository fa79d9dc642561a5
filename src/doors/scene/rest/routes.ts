/**
 * The scene door's REST API under /api/v1 (spec/scene.md "REST API"), on the
 * same session, history and job registry as the MCP tools. Errors are JSON
 * `{status, code, message}`. Each group is one concern; the router sorts the
 * routes, so the order they are listed in does not matter.
 */
import type { RestRoute } from '../../../transport/surface.js';
import type { RouteDeps } from './rest.js';
import { fileRoutes } from './routes-files.js';
import { historyRoutes } from './routes-history.js';
import { pipelineRoutes } from './routes-pipelines.js';
import { projectRoutes } from './routes-projects.js';
import { textRoutes } from './routes-texts.js';

export function sceneRoutes(deps: RouteDeps): RestRoute[] {
  return [
    ...historyRoutes(deps),
    ...fileRoutes(deps),
    ...projectRoutes(deps),
    ...textRoutes(deps),
    ...pipelineRoutes(deps),
  ];
}
