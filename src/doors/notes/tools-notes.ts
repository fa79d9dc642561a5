/**
 * Reading and writing notes (spec/notes.md "Tools"): list, read, create,
 * append. Writes go through the kernel journal (idempotent `operationID`) and
 * commit the document, the write record (with provenance) and the receipt in
 * one transaction; `expectedVersion` must equal the current revision.
 */
import {
  AirlockError,
  connectionLabel,
  defineTool,
  type StoreTx,
  type ToolContext,
} from '../../kernel/index.js';
import { EnvelopeSchema } from './envelope.js';
import { AppendTextInput, CreateNoteInput, DocumentInput, Empty } from './schemas.js';
import {
  createDocument,
  getDocument,
  getProject,
  getWrite,
  listProjectDocuments,
  noteText,
  newDocument,
  putBlock,
  putDocument,
  putWrite,
  readBlocks,
  type NoteDocument,
  type Receipt,
  type WriteRecord,
} from './documents.js';
import { authorizedDocument, grantedProject, type NotesRuntime } from './runtime.js';
import { appendPolicy } from './policy.js';

export const provenanceOf = (i: { provider: string; model: string; promptVersion: string }) => ({
  provider: i.provider,
  model: i.model,
  promptVersion: i.promptVersion,
});

export function conflict(doc: NoteDocument, expected: number): AirlockError {
  return new AirlockError(
    'versionConflict',
    `Document ${doc.documentID} is at revision ${doc.revision}, not ${expected}; read it again and retry with expectedVersion ${doc.revision}.`,
    { currentRevision: doc.revision },
  );
}

/**
 * Commits a write record and returns the signed receipt. A write record for
 * this operation already there (its journal entry expired) answers with the
 * stored receipt instead of writing twice.
 */
export async function recordWrite(
  rt: NotesRuntime,
  tx: StoreTx,
  ctx: ToolContext,
  w: Omit<WriteRecord, 'receipt' | 'connection' | 'at' | 'tool'>,
): Promise<Receipt> {
  const receipt = rt.signer().sign({
    operationID: w.operationID,
    documentID: w.documentID,
    committedRevision: w.committedRevision,
  });
  await putWrite(tx, {
    ...w,
    tool: ctx.tool,
    // Stored as people see it: a session id is never kept or shown in full (authority.md §1).
    connection: connectionLabel(ctx.connection.id),
    at: Date.now(),
    receipt,
  });
  return receipt;
}

/** The four note tools: list, read, create, append. */
export function noteTools(rt: NotesRuntime) {
  return [listDocumentsTool(rt), readNoteTool(rt), createNoteTool(rt), appendTextTool(rt)];
}

/** The journal spec the two note writes share. */
const journal = {
  operationId: (i: { operationID: string }) => i.operationID,
  target: (i: { documentID: string }) => i.documentID,
  provenance: provenanceOf,
  // Documents, blocks and write records all commit in ctx.write's transaction.
  atomic: true,
};

function listDocumentsTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_list_approved_documents`,
    description: 'The readable documents: {documentID: title}. Needs a read grant.',
    input: Empty,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { openWorldHint: false },
    consent: { capability: 'read' },
    handler: async (_input, ctx) => {
      const projectID = grantedProject(ctx.grant);
      const docs = await ctx.store.read((tx) => listProjectDocuments(tx, projectID));
      return Object.fromEntries(docs.map((d) => [d.documentID, d.title]));
    },
  });
}

function readNoteTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_read_note`,
    description:
      'A document’s saved text blocks and revision (no drafts, images or PDF text); too large a note answers resultTooLarge.',
    input: DocumentInput,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { openWorldHint: false },
    consent: { capability: 'read' },
    handler: async ({ documentID }, ctx) => {
      const { doc, blocks } = await ctx.store.read(async (tx) => {
        const found = await authorizedDocument(tx, ctx.grant, documentID);
        return { doc: found, blocks: await readBlocks(tx, documentID) };
      });
      return {
        documentID,
        revision: doc.revision,
        scope: 'savedTextBlocks',
        text: noteText(blocks),
      };
    },
  });
}

function createNoteTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_create_note`,
    description:
      'Create an empty document (receipt at revision 0). You generate operationID and documentID; reuse both on retry. Needs a write grant.',
    input: CreateNoteInput,
    output: EnvelopeSchema,
    effect: 'write',
    annotations: { idempotentHint: true, openWorldHint: false },
    consent: { capability: 'write' },
    journal,
    writes: true,
    handler: async (input, ctx) => {
      const projectID = grantedProject(ctx.grant);
      return ctx.write(async (tx) => {
        const done = await getWrite(tx, input.documentID, input.operationID);
        // An earlier receipt only for a connection granted the document's project.
        if (done)
          return (await authorizedDocument(tx, ctx.grant, input.documentID)) && done.receipt;
        if (!(await getProject(tx, projectID))) {
          throw new AirlockError(
            'notAuthorized',
            'The granted project no longer exists; request write access again.',
          );
        }
        const existing = await getDocument(tx, input.documentID);
        if (existing) {
          if (existing.projectID !== projectID) {
            throw new AirlockError(
              'notAuthorized',
              `Document ${input.documentID} exists outside the granted project; generate a new documentID.`,
            );
          }
          throw new AirlockError(
            'versionConflict',
            `Document ${input.documentID} already exists (revision ${existing.revision}); generate a new documentID for a new note, or append to this one.`,
            { currentRevision: existing.revision },
          );
        }
        await createDocument(tx, newDocument(input.documentID, projectID, input.title));
        await rt.hooks.insideWrite?.(ctx.tool, ctx.signal);
        return recordWrite(rt, tx, ctx, {
          operationID: input.operationID,
          documentID: input.documentID,
          committedRevision: 0,
          provenance: provenanceOf(input),
          detail: { title: input.title },
        });
      });
    },
  });
}

function appendTextTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_append_text`,
    description:
      'Append one text block (1–6,000 UTF-8 bytes). expectedVersion is the current revision. After mutationUncertain retry with the same operationID. Needs a write grant.',
    input: AppendTextInput,
    output: EnvelopeSchema,
    effect: 'write',
    annotations: { idempotentHint: true, openWorldHint: false },
    consent: { capability: 'write' },
    policy: appendPolicy(rt),
    journal,
    writes: true,
    handler: async (input, ctx) =>
      ctx.write(async (tx) => {
        // The grant is checked before an earlier receipt is shown: a receipt is
        // only for a connection that may use the document (authority.md §2).
        const doc = await authorizedDocument(tx, ctx.grant, input.documentID);
        const done = await getWrite(tx, input.documentID, input.operationID);
        if (done) return done.receipt;
        if (doc.revision !== input.expectedVersion) throw conflict(doc, input.expectedVersion);
        const now = Date.now();
        // One block record and the small metadata: the cost of what is added.
        const next: NoteDocument = await putBlock(
          tx,
          { ...doc, revision: doc.revision + 1, updatedAt: now },
          { text: input.text, at: now, author: 'agent', operationID: input.operationID },
        );
        await putDocument(tx, next);
        await rt.hooks.insideWrite?.(ctx.tool, ctx.signal);
        return recordWrite(rt, tx, ctx, {
          operationID: input.operationID,
          documentID: input.documentID,
          committedRevision: next.revision,
          provenance: provenanceOf(input),
          detail: { blockIndex: next.blockCount - 1, bytes: Buffer.byteLength(input.text) },
        });
      }),
  });
}
