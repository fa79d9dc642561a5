/**
 * The active scene and its history over REST: server metadata, the scene
 * itself, and apply/undo/redo, which run as the MCP tools of the same names.
 */
import type { RestRoute } from '../../transport/surface.js';
import { asTool, ok, route, type RouteDeps } from './rest.js';

export function historyRoutes(deps: RouteDeps): RestRoute[] {
  const { session, registry, names } = deps;
  return [
    route('GET', 'meta', 'Server and active project', async () => {
      const p = session.current();
      return ok({
        name: 'airlock',
        door: 'scene',
        version: deps.version,
        project: session.info(),
        epoch: p ? p.history.epoch : null,
        canUndo: p ? p.history.canUndo() : false,
        canRedo: p ? p.history.canRedo() : false,
        engines: [...registry.keys()],
      });
    }),
    route('GET', 'scene.json', 'The active scene: {epoch, scene}', async () => {
      const p = session.require();
      return ok({ epoch: p.history.epoch, scene: p.scene() });
    }),
    route('POST', 'history/apply', 'Apply an Op: {op} → {epoch}', async (req) =>
      asTool(deps, req, names.apply, req.body ?? {}),
    ),
    route('POST', 'history/undo', 'Undo → {epoch} (null at the boundary)', async (req) =>
      asTool(deps, req, names.undo, {}),
    ),
    route('POST', 'history/redo', 'Redo → {epoch} (null at the boundary)', async (req) =>
      asTool(deps, req, names.redo, {}),
    ),
  ];
}
