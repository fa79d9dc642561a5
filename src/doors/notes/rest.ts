/**
 * What the notes door's REST route groups share. Failures are returned as
 * values; the transport maps each code to its one HTTP status. Owner writes
 * go through `reviseDocument`, so each bumps the document's revision exactly
 * as an agent write does and an agent's stale `expectedVersion` fails.
 */
import { failure } from '../../kernel/index.js';
import {
  getDocument,
  putBlock,
  putDocument,
  type Block,
  type NoteDocument,
  type Surface,
} from './documents.js';
import type { NotesRuntime } from './runtime.js';

export const bad = (message: string) => failure('malformedRequest', message);

export const missingDocument = (id: string) =>
  failure('notFound', `No document ${id}; GET /api/v1/notes/documents lists them.`);

/** An owner's change: new surfaces, and/or one text block to append. */
export interface OwnerChange {
  surfaces?: Surface[];
  block?: Block;
}

/**
 * Applies an owner's change to a document in one transaction: `change` gets
 * the current document and the write's time and returns what changes, or
 * null to leave it alone. Null when the document is missing or the change
 * declined; otherwise the stored next revision. Keyed: it reads and writes
 * the document by id.
 */
export function reviseDocument(
  rt: NotesRuntime,
  documentID: string,
  change: (current: NoteDocument, now: number) => OwnerChange | null,
): Promise<NoteDocument | null> {
  return rt.kernel().store.transaction(
    async (tx) => {
      const current = await getDocument(tx, documentID);
      if (!current) return null;
      const now = Date.now();
      const fields = change(current, now);
      if (!fields) return null;
      let next: NoteDocument = {
        ...current,
        revision: current.revision + 1,
        ...(fields.surfaces ? { surfaces: fields.surfaces } : {}),
        updatedAt: now,
      };
      if (fields.block) next = await putBlock(tx, next, fields.block);
      await putDocument(tx, next);
      return next;
    },
    { isolation: 'keyed' },
  );
}
