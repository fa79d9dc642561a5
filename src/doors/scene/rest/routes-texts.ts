/**
 * The active project's texts and translations over REST, as JSON or CSV: a
 * table out, and the same table back in as one undoable batch.
 */
import type { RestRoute } from '../../../transport/surface.js';
import { bytesOf, callTool, file, header, ok, parse, route, type RouteDeps } from './rest.js';
import { projectIdOf } from '../session.js';
import { importOps, rowsFromCsv, textRows, TextsBody, toCsv } from '../model/texts.js';

export function textRoutes(deps: RouteDeps): RestRoute[] {
  const { session, names } = deps;
  return [
    route(
      'GET',
      'projects/current/texts',
      'Texts and translations (format=json|csv)',
      async (req) => {
        const p = session.require();
        const rows = textRows(p.history.state);
        if (req.query.get('format') === 'csv')
          return file({
            bytes: new TextEncoder().encode(toCsv(rows)),
            contentType: 'text/csv; charset=utf-8',
            filename: `${projectIdOf(p.dir)}-texts.csv`,
          });
        return ok({ epoch: p.history.epoch, texts: rows });
      },
    ),
    route(
      'PUT',
      'projects/current/texts',
      'Import texts and translations as one batch (JSON or CSV)',
      async (req) => {
        const p = session.require();
        const csv =
          req.query.get('format') === 'csv' || /csv/i.test(header(req, 'content-type') ?? '');
        const rows = csv
          ? rowsFromCsv(Buffer.from(bytesOf(req.body)).toString('utf8'))
          : parse(TextsBody, req.body).texts;
        const ops = importOps(p.history.state, rows);
        if (!ops.length) return ok({ epoch: p.history.epoch, updated: 0 });
        // One batch through Koharu's apply: the policy sees its op kinds, as for an agent's batch.
        const applied = await callTool(deps, req, names.apply, {
          op: { batch: { ops, label: 'import texts' } },
        });
        if (!applied.ok) return applied;
        const { epoch } = applied.value as { epoch: number };
        return ok({ epoch, updated: ops.length });
      },
    ),
  ];
}
