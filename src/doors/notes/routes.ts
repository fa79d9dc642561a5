/**
 * The owner's REST routes under `/api/v1/notes/` (spec/notes.md "Data"):
 * projects, documents, typed text, PDF upload and download (with its
 * annotations), agent writes with provenance, and receipt verification (what
 * `airlock approvals verify-receipt` calls). Owner writes bump the document's
 * revision like agent writes do, so an agent's stale `expectedVersion` fails.
 *
 * Every owner write is audited as the owner's action (authority.md §3; issue
 * 24: no write without an audit entry). They are owner-only routes, never
 * an agent's entrance, and not tool calls: they carry PDFs of 64 MB and
 * blocks of 1 MB, past the 16 KB and 8 s the RooQi reference sets the
 * notes door's tools.
 */
import { AirlockError, isFailure, sha256Hex, type Failure } from '../../kernel/index.js';
import type { RestRequest, RestResponse, RestRoute } from '../../transport/surface.js';
import { documentRoutes } from './routes-documents.js';
import { pdfRoutes } from './routes-pdfs.js';
import { projectRoutes } from './routes-projects.js';
import { provenanceRoutes } from './routes-provenance.js';
import type { NotesRuntime } from './runtime.js';

/** The audit's name for each owner write (method and path). */
const OWNER_WRITES: Readonly<Record<string, string>> = {
  'POST notes/projects': 'notes.createProject',
  'POST notes/documents': 'notes.createDocument',
  'POST notes/documents/{id}/blocks': 'notes.appendBlock',
  'POST notes/documents/{id}/pdfs': 'notes.uploadPdf',
  'PUT notes/documents/{id}/pdfs/{surfaceID}': 'notes.replacePdf',
};

/** What the audit digests of a request: its path parameters and body (an upload by its SHA-256). */
const auditArgs = ({ params, body }: RestRequest) => ({
  ...params,
  ...(body instanceof Uint8Array
    ? { sha256: sha256Hex(body), bytes: body.byteLength }
    : { body: body ?? null }),
});

function ownerAudited(rt: NotesRuntime, route: RestRoute): RestRoute {
  const tool = OWNER_WRITES[`${route.method} ${route.path}`];
  if (!tool) return route;
  return {
    ...route,
    handler: async (req): Promise<RestResponse | Failure> => {
      // A throw is recorded too: an AirlockError by its code, anything else as internal.
      let result: string = 'internal';
      try {
        const out = await route.handler(req);
        result = isFailure(out) ? out.code : 'ok';
        return out;
      } catch (error) {
        if (error instanceof AirlockError) result = error.code;
        throw error;
      } finally {
        await rt.kernel().audit.ownerAction(tool, rt.mount, auditArgs(req), result);
      }
    },
  };
}

export function notesRoutes(rt: NotesRuntime): RestRoute[] {
  return [
    ...projectRoutes(rt),
    ...documentRoutes(rt),
    ...pdfRoutes(rt),
    ...provenanceRoutes(rt),
  ].map((route) => ownerAudited(rt, route));
}
