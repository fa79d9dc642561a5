/**
 * What agents wrote, over REST: the write log with provenance, and receipt
 * verification (what `airlock approvals verify-receipt` calls).
 */
import type { RestRoute } from '../../transport/surface.js';
import { listWrites } from './documents.js';
import type { NotesRuntime } from './runtime.js';

export function provenanceRoutes(rt: NotesRuntime): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'notes/writes',
      summary: 'Agent writes with provenance, oldest first (?documentID=)',
      handler: async ({ query }) => {
        const documentID = query.get('documentID') ?? undefined;
        const writes = await rt.kernel().store.read((tx) => listWrites(tx, documentID));
        return { status: 200, body: { writes } };
      },
    },
    {
      method: 'POST',
      path: 'notes/receipts/verify',
      summary: 'Check a receipt’s ownerProofSHA256 against this workspace’s secret',
      handler: async ({ body }) => ({ status: 200, body: { valid: rt.signer().verify(body) } }),
    },
  ];
}
