import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';
import { densePdf, samplePdf } from './fixtures.js';
import { canonicalJson } from '../../../src/kernel/digest.js';

let h: Harness;
afterEach(async () => h?.dispose());

const sha = (x: string | Uint8Array) => createHash('sha256').update(x).digest('hex');
const M = 1_000_000;

interface Read {
  revision: number;
  sourceAssetID: string;
  sourceDigest: string;
  geometryDigest: string;
  pageTextDigest: string;
  selectionTextDigest: string;
  selectedText: string;
  lines: { text: string; rect: { x: number; y: number; width: number; height: number } }[];
}

async function withPdf(bytes?: Uint8Array) {
  h = await notesHarness();
  const project = await h.project('Papers');
  const documentID = await h.document(project, 'Reading');
  const pdf = bytes ?? (await samplePdf());
  const up = await h.rest('POST', `notes/documents/${documentID}/pdfs`, Buffer.from(pdf));
  expect(up.status).toBe(201);
  await h.grant('pdfAnnotate', project);
  return { project, documentID, pdf, surfaceID: up.body.surfaceID as string, upload: up.body };
}

const query = (
  documentID: string,
  surfaceID: string,
  pageIndex: number,
  rect: { x: number; y: number; width: number; height: number },
) => ({ documentID, surfaceID, pageIndex, rect });

const annotateArgs = (q: ReturnType<typeof query>, read: Read, kind: string, comment = '') => ({
  operationID: uuid(),
  query: q,
  expectedVersion: read.revision,
  sourceAssetID: read.sourceAssetID,
  sourceDigest: read.sourceDigest,
  geometryDigest: read.geometryDigest,
  selectionTextDigest: read.selectionTextDigest,
  kind,
  comment,
  ...provenance,
});

async function helvetica(text: string, size: number) {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  return font.widthOfTextAtSize(text, size);
}

/** The display box of a word drawn at (x, baseline) in 20-pt Helvetica on an upright page. */
const ASCENT = 0.718;
const DESCENT = -0.207;

async function pdfAnnotations(bytes: Uint8Array, page: number) {
  const doc = await pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  try {
    const annots = await (await doc.getPage(page + 1)).getAnnotations();
    return annots.map((a) => ({
      subtype: a.subtype as string,
      quadPoints: a.quadPoints ? Array.from(a.quadPoints as ArrayLike<number>) : null,
      contents: (a.contentsObj as { str: string } | undefined)?.str ?? '',
    }));
  } finally {
    await doc.destroy();
  }
}

describe('PDF targets and upload', () => {
  it('list_pdf_targets shows each surface with its source asset, digest and 0-based page range', async () => {
    const { documentID, surfaceID, pdf, upload } = await withPdf();
    expect(upload.sourceDigest).toBe(sha(pdf));
    const r = await h.ok('rooqi_list_pdf_targets', { documentID });
    expect(r).toEqual({
      documentID,
      revision: 1,
      targets: [
        {
          surfaceID,
          sourceAssetID: upload.sourceAssetID,
          sourceDigest: sha(pdf),
          sourcePageCount: 4,
          availableSourcePages: [[0, 3]],
        },
      ],
    });
  });

  it('refuses an upload that is not a PDF', async () => {
    const { documentID } = await withPdf();
    const r = await h.rest('POST', `notes/documents/${documentID}/pdfs`, Buffer.from('hello'));
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('malformedRequest');
  });
});

describe('read_pdf_page', () => {
  it('returns exactly the words whose centre is inside rect, with their line rect', async () => {
    const { documentID, surfaceID } = await withPdf();
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x: 150_000, y: 90_000, width: 200_000, height: 60_000 }),
    );
    expect(r.selectedText).toBe('Alpha');
    const w = await helvetica('Alpha', 20);
    const [line] = r.lines;
    expect(line!.text).toBe('Alpha');
    expect(line!.rect.x).toBe(Math.floor((100 / 600) * M));
    expect(line!.rect.y).toBeCloseTo(((800 - 700 - ASCENT * 20) / 800) * M, -1);
    expect(line!.rect.width).toBeCloseTo((w / 600) * M, -1);
    expect(line!.rect.height).toBeCloseTo((((ASCENT - DESCENT) * 20) / 800) * M, -1);
  });

  it('groups selected words by line, top to bottom, joined with newlines', async () => {
    const { documentID, surfaceID } = await withPdf();
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 300_000 }),
    );
    expect(r.selectedText).toBe('Alpha Beta\nGamma delta');
    expect(r.lines.map((l) => l.text)).toEqual(['Alpha Beta', 'Gamma delta']);
    expect(r.lines[0]!.rect.y).toBeLessThan(r.lines[1]!.rect.y);
    expect(r.lines[0]!.rect.x + r.lines[0]!.rect.width).toBeCloseTo(
      ((300 + (await helvetica('Beta', 20))) / 600) * M,
      -1,
    );
  });

  it('selects one word of a multi-word run when only its centre is inside', async () => {
    const { documentID, surfaceID } = await withPdf();
    const w = await helvetica('Gamma delta', 20);
    const x = Math.round(((100 + w * 0.6) / 600) * M);
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x, y: 150_000, width: 300_000, height: 50_000 }),
    );
    expect(r.selectedText).toBe('delta');
  });

  it('answers the four digests as specified', async () => {
    const { documentID, surfaceID, pdf } = await withPdf();
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 300_000 }),
    );
    expect(r.sourceDigest).toBe(sha(pdf));
    expect(r.geometryDigest).toBe(
      sha(canonicalJson({ cropBox: [0, 0, 600, 800], height: 800, rotation: 0, width: 600 })),
    );
    expect(r.pageTextDigest).toBe(sha('Alpha Beta\nGamma delta\nEpsilon'));
    expect(r.selectionTextDigest).toBe(sha('Alpha Beta\nGamma delta'));
    expect(r.revision).toBe(1);
  });

  it('uses display coordinates on a page rotated 90°', async () => {
    const { documentID, surfaceID } = await withPdf();
    // Displayed 800 wide × 600 high; the text reads upright at x=100, baseline 100 pt from the top.
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 1, { x: 100_000, y: 100_000, width: 300_000, height: 100_000 }),
    );
    expect(r.selectedText).toBe('Rotated words');
    const [line] = r.lines;
    expect(line!.rect.x).toBeCloseTo((100 / 800) * M, -1);
    expect(line!.rect.y).toBeCloseTo(((100 - ASCENT * 20) / 600) * M, -1);
    // pdf.js measures this run 0.4 pt wider than pdf-lib's metrics do
    expect(
      Math.abs(line!.rect.width - ((await helvetica('Rotated words', 20)) / 800) * M),
    ).toBeLessThan(1000);
    expect(r.geometryDigest).toBe(
      sha(canonicalJson({ cropBox: [0, 0, 600, 800], height: 600, rotation: 90, width: 800 })),
    );
  });

  it('uses the crop box as the page, and text outside it is not on the page', async () => {
    const { documentID, surfaceID } = await withPdf();
    const r = await h.ok<Read>(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 2, { x: 0, y: 0, width: M, height: 500_000 }),
    );
    expect(r.selectedText).toBe('Cropped');
    expect(r.pageTextDigest).toBe(sha('Cropped'));
    expect(r.lines[0]!.rect.x).toBeCloseTo((50 / 300) * M, -1);
    expect(r.lines[0]!.rect.y).toBeCloseTo(((450 - 300 - ASCENT * 20) / 400) * M, -1);
  });

  it('answers noText for a page without a text layer', async () => {
    const { documentID, surfaceID } = await withPdf();
    const env = await h.env(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 3, { x: 0, y: 0, width: 100_000, height: 100_000 }),
    );
    expect(env.code).toBe('noText');
  });

  it('answers selectionTooLarge for a rect over half the page', async () => {
    const { documentID, surfaceID } = await withPdf();
    const env = await h.env(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 500_001 }),
    );
    expect(env.code).toBe('selectionTooLarge');
  });

  it('answers selectionTooLarge when the selected text exceeds 8,000 bytes', async () => {
    const { documentID, surfaceID } = await withPdf(await densePdf());
    const env = await h.env(
      'rooqi_read_pdf_page',
      query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 500_000 }),
    );
    expect(env.code).toBe('selectionTooLarge');
  });

  it('answers notFound for a page or surface that does not exist', async () => {
    const { documentID, surfaceID } = await withPdf();
    const rect = { x: 0, y: 0, width: 10, height: 10 };
    expect((await h.env('rooqi_read_pdf_page', query(documentID, surfaceID, 4, rect))).code).toBe(
      'notFound',
    );
    expect((await h.env('rooqi_read_pdf_page', query(documentID, uuid(), 0, rect))).code).toBe(
      'notFound',
    );
  });
});

describe('annotate_pdf', () => {
  for (const objectStreams of [true, false]) {
    it(`adds highlight then underline by incremental updates (${objectStreams ? 'xref stream' : 'xref table'})`, async () => {
      const { documentID, surfaceID, pdf } = await withPdf(await samplePdf({ objectStreams }));
      const q1 = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 300_000 });
      const read1 = await h.ok<Read>('rooqi_read_pdf_page', q1);
      const r1 = await h.ok<{ committedRevision: number }>(
        'rooqi_annotate_pdf',
        annotateArgs(q1, read1, 'highlight', 'key terms'),
      );
      expect(r1.committedRevision).toBe(2);
      const after1 = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;

      const q2 = query(documentID, surfaceID, 0, { x: 0, y: 700_000, width: M, height: 100_000 });
      const read2 = await h.ok<Read>('rooqi_read_pdf_page', q2);
      expect(read2.selectedText).toBe('Epsilon');
      expect(read2.revision).toBe(2);
      await h.ok('rooqi_annotate_pdf', annotateArgs(q2, read2, 'underline'));
      const after2 = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;

      // earlier bytes untouched
      expect(Buffer.from(after1.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true);
      expect(Buffer.from(after2.subarray(0, after1.length)).equals(Buffer.from(after1))).toBe(true);

      const annots = await pdfAnnotations(after2, 0);
      expect(annots.map((a) => a.subtype)).toEqual(['Highlight', 'Underline']);
      // each carries its own appearance stream, for viewers that do not draw markup themselves
      const doc = await pdfjs.getDocument({ data: new Uint8Array(after2), verbosity: 0 }).promise;
      const raw = await (await doc.getPage(1)).getAnnotations();
      expect(raw.map((a) => a.hasAppearance)).toEqual([true, true]);
      await doc.destroy();
      expect(annots[0]!.contents).toBe('key terms');
      // one quad per selected line, upper-left, upper-right, lower-left, lower-right in user space
      const alphaTop = 700 + ASCENT * 20;
      const alphaBottom = 700 + DESCENT * 20;
      const q = annots[0]!.quadPoints!;
      expect(q).toHaveLength(16);
      expect(q[0]).toBeCloseTo(100, 1);
      expect(q[1]).toBeCloseTo(alphaTop, 1);
      expect(q[2]).toBeCloseTo(300 + (await helvetica('Beta', 20)), 1);
      expect(q[5]).toBeCloseTo(alphaBottom, 1);
      expect(q[9]).toBeCloseTo(650 + ASCENT * 20, 1);
      expect(annots[1]!.quadPoints).toHaveLength(8);
      expect(annots[1]!.quadPoints![1]).toBeCloseTo(200 + ASCENT * 20, 1);

      // pdf-lib reads the file too, and the text layer is unchanged
      const reloaded = await PDFDocument.load(after2);
      expect(reloaded.getPageCount()).toBe(4);
    });
  }

  it('adds a comment as a text note and keeps earlier annotations', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q1 = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read1 = await h.ok<Read>('rooqi_read_pdf_page', q1);
    await h.ok('rooqi_annotate_pdf', annotateArgs(q1, read1, 'highlight'));
    const read2 = await h.ok<Read>('rooqi_read_pdf_page', q1);
    await h.ok('rooqi_annotate_pdf', annotateArgs(q1, read2, 'comment', 'Check this — ✓'));
    const bytes = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;
    const annots = await pdfAnnotations(bytes, 0);
    expect(annots.map((a) => [a.subtype, a.contents])).toEqual([
      ['Highlight', ''],
      ['Text', 'Check this — ✓'],
    ]);
  });

  it('annotates on a rotated page with quads in user space', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 1, {
      x: 100_000,
      y: 100_000,
      width: 300_000,
      height: 100_000,
    });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    await h.ok('rooqi_annotate_pdf', annotateArgs(q, read, 'highlight'));
    const bytes = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;
    const [annot] = await pdfAnnotations(bytes, 1);
    // the text runs up the unrotated page from (100, 100): x spans the glyph height, y its length
    const quad = annot!.quadPoints!;
    const xs = quad.filter((_, i) => i % 2 === 0);
    const ys = quad.filter((_, i) => i % 2 === 1);
    expect(Math.min(...xs)).toBeCloseTo(100 - ASCENT * 20, 1);
    expect(Math.max(...xs)).toBeCloseTo(100 - DESCENT * 20, 1);
    expect(Math.min(...ys)).toBeCloseTo(100, 1);
    expect(Math.abs(Math.max(...ys) - 100 - (await helvetica('Rotated words', 20)))).toBeLessThan(
      0.5,
    );
  });

  it('a retry with the same operationID returns the identical receipt and adds nothing', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    const args = annotateArgs(q, read, 'highlight');
    const first = await h.env('rooqi_annotate_pdf', args);
    const again = await h.env('rooqi_annotate_pdf', args);
    expect(again).toEqual(first);
    const bytes = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;
    expect(await pdfAnnotations(bytes, 0)).toHaveLength(1);
  });

  it('digests from before a re-upload answer staleSelection', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    const replaced = await h.rest(
      'PUT',
      `notes/documents/${documentID}/pdfs/${surfaceID}`,
      Buffer.from(await samplePdf({ marker: 'v2' })),
    );
    expect(replaced.status).toBe(200);
    const env = await h.env('rooqi_annotate_pdf', annotateArgs(q, read, 'highlight'));
    expect(env.code).toBe('staleSelection');
  });

  it('a selection digest that no longer matches the text answers staleSelection', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    const wider = { ...q, rect: { ...q.rect, height: 300_000 } };
    expect((await h.env('rooqi_annotate_pdf', annotateArgs(wider, read, 'highlight'))).code).toBe(
      'staleSelection',
    );
    const badGeometry = { ...annotateArgs(q, read, 'highlight'), geometryDigest: sha('other') };
    expect((await h.env('rooqi_annotate_pdf', badGeometry)).code).toBe('staleSelection');
  });

  it('a stale expectedVersion answers versionConflict and writes nothing', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    await h.rest('POST', `notes/documents/${documentID}/blocks`, { text: 'owner edit' });
    const env = await h.env('rooqi_annotate_pdf', annotateArgs(q, read, 'highlight'));
    expect(env.code).toBe('versionConflict');
    const bytes = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;
    expect(await pdfAnnotations(bytes, 0)).toHaveLength(0);
  });

  it('a comment may sit on a rect without words; a highlight there is malformedRequest', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, {
      x: 700_000,
      y: 400_000,
      width: 100_000,
      height: 100_000,
    });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    expect(read.selectedText).toBe('');
    expect(read.lines).toEqual([]);
    expect((await h.env('rooqi_annotate_pdf', annotateArgs(q, read, 'highlight'))).code).toBe(
      'malformedRequest',
    );
    await h.ok('rooqi_annotate_pdf', annotateArgs(q, read, 'comment', 'blank area'));
    const bytes = (await h.rest('GET', `notes/documents/${documentID}/pdfs/${surfaceID}`)).raw!;
    expect(await pdfAnnotations(bytes, 0)).toEqual([
      { subtype: 'Text', quadPoints: null, contents: 'blank area' },
    ]);
  });

  it('a PDF grant is separate: read and write grants do not allow PDF tools', async () => {
    h = await notesHarness();
    const p = await h.project('P');
    const d = await h.document(p);
    await h.grant('read', p);
    await h.grant('write', p);
    expect((await h.env('rooqi_list_pdf_targets', { documentID: d })).code).toBe('notAuthorized');
  });
});

describe('query_pdf_operation', () => {
  it('answers committed with the receipt, and not-found for unknown operations', async () => {
    const { documentID, surfaceID } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    const args = annotateArgs(q, read, 'highlight');
    const receipt = await h.ok('rooqi_annotate_pdf', args);
    expect(
      await h.ok('rooqi_query_pdf_operation', { documentID, operationID: args.operationID }),
    ).toEqual({
      state: 'committed',
      receipt,
    });
    expect(await h.ok('rooqi_query_pdf_operation', { documentID, operationID: uuid() })).toEqual({
      state: 'not-found',
    });
  });

  it('does not reveal an operation of another document', async () => {
    const { documentID, surfaceID, project } = await withPdf();
    const q = query(documentID, surfaceID, 0, { x: 0, y: 0, width: M, height: 150_000 });
    const read = await h.ok<Read>('rooqi_read_pdf_page', q);
    const args = annotateArgs(q, read, 'highlight');
    await h.ok('rooqi_annotate_pdf', args);
    const other = await h.document(project, 'other');
    expect(
      await h.ok('rooqi_query_pdf_operation', { documentID: other, operationID: args.operationID }),
    ).toEqual({ state: 'not-found' });
  });
});
