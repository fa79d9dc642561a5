/**
 * PDF surfaces of a notes document over REST: upload a PDF as a new surface,
 * replace a surface's source, and download it with its annotations. A source
 * is content-addressed in the kernel's blob store under its SHA-256.
 */
import { randomUUID } from 'node:crypto';
import { failure, sha256Hex, type Failure } from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import { getDocument, type Surface } from './documents.js';
import { pageCountOf, PdfUnreadableError } from './pdf-text.js';
import { bad, missingDocument, reviseDocument } from './rest.js';
import type { NotesRuntime } from './runtime.js';

/** PDFs run larger than the server's default body cap. */
const PDF_MAX_BYTES = 64 * 1024 * 1024;

const missingSurface = (params: Record<string, string>) =>
  failure(
    'notFound',
    `No surface ${params.surfaceID} on document ${params.id}; GET /api/v1/notes/documents/${params.id} lists its surfaces.`,
  );

/** Reads an uploaded PDF body: bytes, digest and page count, or a 400 answer. */
async function uploadedPdf(
  body: unknown,
): Promise<{ bytes: Uint8Array; digest: string; pages: number } | Failure> {
  if (!(body instanceof Uint8Array) || body.length === 0) {
    return bad('Send the PDF as the raw request body with content-type application/pdf.');
  }
  if (Buffer.from(body.subarray(0, 1024)).toString('latin1').indexOf('%PDF-') < 0) {
    return bad('The body is not a PDF (no %PDF- header).');
  }
  try {
    const pages = await pageCountOf(body);
    // Annotations are written by incremental update, which needs an unencrypted file pdf-lib can parse.
    const parsed = await (await import('pdf-lib')).PDFDocument.load(body, { updateMetadata: false }).catch(() => null);
    if (!parsed || parsed.isEncrypted) {
      return bad(
        'The PDF is encrypted or cannot be parsed for annotation; upload an unencrypted copy.',
      );
    }
    return { bytes: body, digest: sha256Hex(body), pages };
  } catch (error) {
    const reason = error instanceof PdfUnreadableError ? error.message : 'unreadable';
    return bad(`The PDF cannot be read (${reason}); encrypted or damaged files are not accepted.`);
  }
}

/** A fresh source asset for an uploaded PDF: no annotations yet, so current is the source. */
const sourceOf = (pdf: { digest: string; pages: number }) => ({
  sourceAssetID: randomUUID(),
  sourceDigest: pdf.digest,
  sourcePageCount: pdf.pages,
  currentDigest: pdf.digest,
  annotations: [],
});

/** What an upload answers: the surface, its source asset and the document's new revision. */
const uploaded = (
  surfaceID: string,
  source: Pick<Surface, 'sourceAssetID' | 'sourceDigest' | 'sourcePageCount'>,
  revision: number,
) => ({
  surfaceID,
  sourceAssetID: source.sourceAssetID,
  sourceDigest: source.sourceDigest,
  sourcePageCount: source.sourcePageCount,
  revision,
});

export function pdfRoutes(rt: NotesRuntime): RestRoute[] {
  const blobs = () => rt.kernel().blobs;
  return [
    {
      method: 'POST',
      path: 'notes/documents/{id}/pdfs',
      summary: 'Upload a PDF (raw application/pdf body) as a new surface of the document',
      maxBodyBytes: PDF_MAX_BYTES,
      body: 'raw',
      handler: async ({ params, body }) => {
        const pdf = await uploadedPdf(body);
        if ('ok' in pdf) return pdf;
        await blobs().put(pdf.bytes);
        const surface: Surface = {
          surfaceID: randomUUID(),
          ...sourceOf(pdf),
          createdAt: Date.now(),
        };
        const doc = await reviseDocument(rt, params.id!, (current) => ({
          surfaces: [...current.surfaces, surface],
        }));
        if (!doc) return missingDocument(params.id!);
        return { status: 201, body: uploaded(surface.surfaceID, surface, doc.revision) };
      },
    },
    {
      method: 'PUT',
      path: 'notes/documents/{id}/pdfs/{surfaceID}',
      summary:
        'Replace a surface’s source PDF (raw application/pdf body): a new source asset, earlier annotations dropped',
      maxBodyBytes: PDF_MAX_BYTES,
      body: 'raw',
      handler: async ({ params, body }) => {
        const pdf = await uploadedPdf(body);
        if ('ok' in pdf) return pdf;
        await blobs().put(pdf.bytes);
        const replacement = sourceOf(pdf);
        const doc = await reviseDocument(rt, params.id!, (current) =>
          current.surfaces.some((s) => s.surfaceID === params.surfaceID)
            ? {
                surfaces: current.surfaces.map((s) =>
                  s.surfaceID === params.surfaceID ? { ...s, ...replacement } : s,
                ),
              }
            : null,
        );
        if (!doc) return missingSurface(params);
        return { status: 200, body: uploaded(params.surfaceID!, replacement, doc.revision) };
      },
    },
    {
      method: 'GET',
      path: 'notes/documents/{id}/pdfs/{surfaceID}',
      summary: 'Download a surface’s PDF with its annotations',
      handler: async ({ params }) => {
        const doc = await rt.kernel().store.read((tx) => getDocument(tx, params.id!));
        const surface = doc?.surfaces.find((s) => s.surfaceID === params.surfaceID);
        if (!surface) return missingSurface(params);
        const bytes = await blobs().get(surface.currentDigest);
        if (!bytes)
          return failure(
            'internal',
            'The PDF bytes are missing from the blob store; upload the PDF to this document again.',
          );
        return {
          status: 200,
          raw: { bytes, contentType: 'application/pdf', filename: `${params.surfaceID}.pdf` },
        };
      },
    },
  ];
}
