/**
 * The active scene and its history over REST: server metadata, the scene
 * itself, and apply/undo/redo, which run as the MCP tools of the same names.
 * Each write takes an optional `operationID` in its JSON body, with the
 * tools' meaning (operations.ts): a retry answers the first result.
 */
import { isObject } from '../../../kernel/index.js';
import type { RestRoute } from '../../../transport/surface.js';
import { asTool, ok, route, type RouteDeps } from './rest.js';

/**
 * undo/redo arguments from a body: only its operationID (any other body was
 * ignored before operationID existed, and still is).
 */
const moveArgs = (body: unknown) =>
  isObject(body) && body.operationID !== undefined ? { operationID: body.operationID } : {};

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
    route(
      'POST',
      'history/apply',
      'Apply an Op: {op, operationID?} → {epoch}; a retry with the same operationID answers the first epoch',
      async (req) => asTool(deps, req, names.apply, req.body ?? {}),
    ),
    route(
      'POST',
      'history/undo',
      'Undo: {operationID?} → {epoch} (null at the boundary); a retry with the same operationID answers the first epoch',
      async (req) => asTool(deps, req, names.undo, moveArgs(req.body)),
    ),
    route(
      'POST',
      'history/redo',
      'Redo: {operationID?} → {epoch} (null at the boundary); a retry with the same operationID answers the first epoch',
      async (req) => asTool(deps, req, names.redo, moveArgs(req.body)),
    ),
  ];
}
