/**
 * PDF tools (spec/notes.md "PDF geometry and digests"): list a document's
 * PDF surfaces, read the text inside a rect of a page with the digests that
 * pin it, annotate exactly what was read (an incremental update of the PDF),
 * and query an operation's durable state. All need the separate
 * `pdfAnnotate` grant.
 */
import {
  AirlockError,
  defineTool,
  journalKey,
  utf8Bytes,
  type StoreTx,
  type ToolContext,
} from '../../kernel/index.js';
import { doorError, EnvelopeSchema } from './envelope.js';
import {
  AnnotateInput,
  DocumentInput,
  PageQuery,
  QueryOperationInput,
  type Annotate,
  type Rect,
} from './schemas.js';
import {
  getWrite,
  putDocument,
  type NoteDocument,
  type Receipt,
  type Surface,
} from './documents.js';
import { authorizedDocument, type NotesRuntime } from './runtime.js';
import {
  MILLION,
  quadOf,
  rectOf,
  select,
  userPoint,
  type PageText,
  type Selection,
} from './pdf-text.js';
import { appendAnnotation } from './pdf-incremental.js';
import { conflict, provenanceOf, recordWrite } from './tools-notes.js';
import { annotatePolicy } from './policy.js';

const SELECTION_MAX_BYTES = 8000;

function surfaceOf(doc: NoteDocument, surfaceID: string): Surface {
  const surface = doc.surfaces.find((s) => s.surfaceID === surfaceID);
  if (!surface) {
    throw new AirlockError(
      'notFound',
      `Document ${doc.documentID} has no PDF surface ${surfaceID}; call rooqi_list_pdf_targets for its surfaces.`,
    );
  }
  return surface;
}

interface PageRead {
  doc: NoteDocument;
  surface: Surface;
  page: PageText;
  selection: Selection;
}

/** Shared by read and annotate: the page's text layer and what `rect` selects. */
async function readSelection(
  rt: NotesRuntime,
  ctx: ToolContext,
  q: { documentID: string; surfaceID: string; pageIndex: number; rect: Rect },
): Promise<PageRead> {
  const doc = await ctx.store.read((tx) => authorizedDocument(tx, ctx.grant, q.documentID));
  const surface = surfaceOf(doc, q.surfaceID);
  if (q.pageIndex >= surface.sourcePageCount) {
    throw new AirlockError(
      'notFound',
      `Surface ${q.surfaceID} has pages 0 to ${surface.sourcePageCount - 1}; pageIndex ${q.pageIndex} does not exist; pass a pageIndex in that range.`,
    );
  }
  if (q.rect.width * q.rect.height > (MILLION * MILLION) / 2) {
    throw doorError(
      'selectionTooLarge',
      'rect covers more than half of the page; select a smaller region (a paragraph or a few lines).',
    );
  }
  const page = await rt.pageText(surface.sourceDigest, q.pageIndex);
  if (page.lines.length === 0) {
    throw doorError(
      'noText',
      `Page ${q.pageIndex} has no extractable text (it may be a scanned image); text is never invented by OCR. Choose another page.`,
    );
  }
  const selection = select(page, q.rect);
  if (utf8Bytes(selection.selectedText) > SELECTION_MAX_BYTES) {
    throw doorError(
      'selectionTooLarge',
      `The selected text exceeds ${SELECTION_MAX_BYTES} bytes; select a smaller region.`,
    );
  }
  return { doc, surface, page, selection };
}

/** The four PDF tools: targets, read a page, annotate, query an operation. */
export function pdfTools(rt: NotesRuntime) {
  return [listTargetsTool(rt), readPageTool(rt), annotateTool(rt), queryOperationTool(rt)];
}

function listTargetsTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_list_pdf_targets`,
    description:
      'A document’s PDF surfaces: source asset, digest, 0-based page ranges [from, to]. Needs a PDF annotation grant.',
    input: DocumentInput,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { openWorldHint: false },
    consent: { capability: 'pdfAnnotate' },
    handler: async ({ documentID }, ctx) => {
      const doc = await ctx.store.read((tx) => authorizedDocument(tx, ctx.grant, documentID));
      return {
        documentID,
        revision: doc.revision,
        targets: doc.surfaces.map((s) => ({
          surfaceID: s.surfaceID,
          sourceAssetID: s.sourceAssetID,
          sourceDigest: s.sourceDigest,
          sourcePageCount: s.sourcePageCount,
          availableSourcePages: s.sourcePageCount > 0 ? [[0, s.sourcePageCount - 1]] : [],
        })),
      };
    },
  });
}

function readPageTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_read_pdf_page`,
    description:
      'Text inside rect on a page of the source PDF, with the digests and revision rooqi_annotate_pdf needs. rect: display coordinates from the top left, in millionths of the page; a word counts when its centre is inside. noText: no text layer; selectionTooLarge: over half the page or 8,000 bytes.',
    input: PageQuery,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { openWorldHint: false },
    consent: { capability: 'pdfAnnotate' },
    handler: async (q, ctx) => {
      const { doc, surface, page, selection } = await readSelection(rt, ctx, q);
      return {
        revision: doc.revision,
        sourceAssetID: surface.sourceAssetID,
        sourceDigest: surface.sourceDigest,
        geometryDigest: page.geometryDigest,
        pageTextDigest: page.pageTextDigest,
        selectionTextDigest: selection.selectionTextDigest,
        selectedText: selection.selectedText,
        lines: selection.lines.map((l) => ({ text: l.text, rect: rectOf(l.box) })),
      };
    },
  });
}

function annotateTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_annotate_pdf`,
    description:
      'Highlight, underline or comment the text rooqi_read_pdf_page returned: pass its query unchanged, its revision as expectedVersion, its sourceAssetID and digests. Stale digests answer staleSelection. After mutationUncertain retry with the same operationID.',
    input: AnnotateInput,
    output: EnvelopeSchema,
    effect: 'write',
    annotations: { idempotentHint: true, openWorldHint: false },
    consent: { capability: 'pdfAnnotate' },
    policy: annotatePolicy(rt),
    journal: {
      operationId: (i) => i.operationID,
      target: (i) => i.query.documentID,
      provenance: provenanceOf,
    },
    writes: true,
    handler: async (input, ctx) => {
      const q = input.query;
      // The grant is checked before an earlier receipt is shown (authority.md §2).
      const doc = await ctx.store.read((tx) => authorizedDocument(tx, ctx.grant, q.documentID));
      const done = await ctx.store.read((tx) => getWrite(tx, q.documentID, input.operationID));
      if (done) return ctx.write(async () => done.receipt);
      const surface = surfaceOf(doc, q.surfaceID);
      checkSourceUnchanged(surface, input);
      const { page, selection } = await readSelection(rt, ctx, q);
      checkAnnotatable(input, doc, page, selection);
      const digest = await storeAnnotatedPdf(ctx, input, surface, page, selection);
      return ctx.write((tx) => commitAnnotation(rt, tx, ctx, input, digest, selection));
    },
  });
}

/** The PDF the agent read is still the surface's source. */
function checkSourceUnchanged(surface: Surface, input: Annotate): void {
  if (
    surface.sourceAssetID !== input.sourceAssetID ||
    surface.sourceDigest !== input.sourceDigest
  ) {
    throw doorError(
      'staleSelection',
      'The PDF was replaced since you read it (sourceAssetID or sourceDigest differ); call rooqi_list_pdf_targets and rooqi_read_pdf_page again.',
    );
  }
}

/** The page and selection match what was read, at the expected revision, and select something. */
function checkAnnotatable(
  input: Annotate,
  doc: NoteDocument,
  page: PageText,
  selection: Selection,
): void {
  if (page.geometryDigest !== input.geometryDigest) {
    throw doorError(
      'staleSelection',
      'geometryDigest does not match the page; read the page again.',
    );
  }
  if (selection.selectionTextDigest !== input.selectionTextDigest) {
    throw doorError(
      'staleSelection',
      'selectionTextDigest does not match the text inside rect; read the page again and annotate what it returns.',
    );
  }
  if (doc.revision !== input.expectedVersion) throw conflict(doc, input.expectedVersion);
  if (input.kind !== 'comment' && selection.lines.length === 0) {
    throw new AirlockError(
      'malformedRequest',
      'rect selects no words, so there is nothing to highlight or underline; read the page and choose a rect around words (or use kind comment).',
      { field: 'query.rect' },
    );
  }
}

/** Appends the annotation to the surface's current PDF and stores it; returns its digest. */
async function storeAnnotatedPdf(
  ctx: ToolContext,
  input: Annotate,
  surface: Surface,
  page: PageText,
  selection: Selection,
): Promise<string> {
  const q = input.query;
  const quads = selection.lines.map((l) => quadOf(page, l.box));
  const rect = annotationRect(page, q.rect, quads, input.kind === 'comment');
  const current = await ctx.blobs.get(surface.currentDigest);
  if (!current)
    throw new Error(`annotated PDF ${surface.currentDigest} is missing from the blob store`);
  const bytes = await appendAnnotation(current, {
    pageIndex: q.pageIndex,
    kind: input.kind,
    quads,
    rect,
    contents: input.comment,
    name: input.operationID,
    author: `${input.provider}/${input.model}`,
    date: new Date(),
  });
  return ctx.blobs.put(bytes);
}

/** In the write's transaction: the next revision pointing at the annotated PDF, and its receipt. */
async function commitAnnotation(
  rt: NotesRuntime,
  tx: StoreTx,
  ctx: ToolContext,
  input: Annotate,
  digest: string,
  selection: Selection,
): Promise<Receipt> {
  const q = input.query;
  const latest = await authorizedDocument(tx, ctx.grant, q.documentID);
  if (latest.revision !== input.expectedVersion) throw conflict(latest, input.expectedVersion);
  const now = Date.now();
  const next: NoteDocument = {
    ...latest,
    revision: latest.revision + 1,
    updatedAt: now,
    surfaces: latest.surfaces.map((s) =>
      s.surfaceID !== q.surfaceID
        ? s
        : {
            ...s,
            currentDigest: digest,
            annotations: [
              ...s.annotations,
              {
                operationID: input.operationID,
                kind: input.kind,
                pageIndex: q.pageIndex,
                rect: q.rect,
                comment: input.comment,
                at: now,
              },
            ],
          },
    ),
  };
  await putDocument(tx, next);
  await rt.hooks.insideWrite?.(ctx.tool, ctx.signal);
  return recordWrite(rt, tx, ctx, {
    operationID: input.operationID,
    documentID: q.documentID,
    committedRevision: next.revision,
    provenance: provenanceOf(input),
    detail: {
      surfaceID: q.surfaceID,
      pageIndex: q.pageIndex,
      kind: input.kind,
      rect: q.rect,
      selectedText: selection.selectedText,
      comment: input.comment,
    },
  });
}

function queryOperationTool(rt: NotesRuntime) {
  return defineTool({
    name: `${rt.prefix}_query_pdf_operation`,
    description:
      'The state of an earlier write by operationID: committed (with receipt), prepared-not-submitted, submission-uncertain-do-not-use-new-id or not-found.',
    input: QueryOperationInput,
    output: EnvelopeSchema,
    effect: 'read',
    annotations: { openWorldHint: false },
    consent: { capability: 'pdfAnnotate' },
    handler: async ({ documentID, operationID }, ctx) => {
      const kernel = rt.kernel();
      const { entry, written } = await ctx.store.read(async (tx) => {
        await authorizedDocument(tx, ctx.grant, documentID);
        return {
          entry: await tx.journal.get(rt.mount, journalKey(ctx.connection, operationID)),
          written: await getWrite(tx, documentID, operationID),
        };
      });
      if (written) return { state: 'committed', receipt: written.receipt };
      if (!entry || entry.target !== documentID) return { state: 'not-found' };
      return kernel.journal.state(rt.mount, journalKey(ctx.connection, operationID));
    },
  });
}

/** The annotation's /Rect in user space: around the quads, or a note icon at the rect's corner. */
function annotationRect(
  page: PageText,
  rect: Rect,
  quads: number[][],
  note: boolean,
): [number, number, number, number] {
  if (note) {
    const [x, y] = userPoint(page, rect.x / MILLION, rect.y / MILLION);
    return [x, y - 20, x + 20, y];
  }
  const xs = quads.flatMap((q) => q.filter((_, i) => i % 2 === 0));
  const ys = quads.flatMap((q) => q.filter((_, i) => i % 2 === 1));
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}
