/**
 * The owner's REST routes under `/api/v1/notes/` (spec/notes.md "Data"):
 * projects, documents, typed text, PDF upload and download (with its
 * annotations), agent writes with provenance, and receipt verification (what
 * `airlock approvals verify-receipt` calls). Owner writes bump the document's
 * revision like agent writes do, so an agent's stale `expectedVersion` fails.
 */
import type { RestRoute } from '../../transport/surface.js';
import { documentRoutes } from './routes-documents.js';
import { pdfRoutes } from './routes-pdfs.js';
import { projectRoutes } from './routes-projects.js';
import { provenanceRoutes } from './routes-provenance.js';
import type { NotesRuntime } from './runtime.js';

export function notesRoutes(rt: NotesRuntime): RestRoute[] {
  return [...projectRoutes(rt), ...documentRoutes(rt), ...pdfRoutes(rt), ...provenanceRoutes(rt)];
}
