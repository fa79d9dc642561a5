/**
 * The owner's REST routes under `/api/v1/notes/` (spec/notes.md "Data"):
 * projects, documents, typed text, PDF upload and download (with its
 * annotations), agent writes with provenance, and receipt verification (what
 * `airlock approvals verify-receipt` calls). Owner writes bump the document's
 * revision like agent writes do, so an agent's stale `expectedVersion` fails.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { PDFDocument } from 'pdf-lib';
import {
  failure,
  sha256Hex,
  utf8String,
  uuidString,
  validateInput,
  type Failure,
} from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import { charString } from './schemas.js';
import {
  getDocument,
  getProject,
  listDocuments,
  listProjects,
  listWrites,
  putDocument,
  PROJECTS,
  type NoteDocument,
  type Surface,
} from './documents.js';
import { pageCountOf, PdfUnreadableError } from './pdf-text.js';
import type { NotesRuntime } from './runtime.js';

// Failures are returned as values; the transport maps each code to its one HTTP status.
const bad = (message: string) => failure('malformedRequest', message);
const missingDocument = (id: string) =>
  failure('notFound', `No document ${id}; GET /api/v1/notes/documents lists them.`);

const ProjectBody = z.object({ name: charString(1, 200) }).strict();
const DocumentBody = z
  .object({
    projectID: z.string().min(1),
    title: charString(1, 200),
    documentID: uuidString().optional(),
  })
  .strict();
const BlockBody = z.object({ text: utf8String(1, 1_000_000) }).strict();

function summary(doc: NoteDocument) {
  return {
    documentID: doc.documentID,
    projectID: doc.projectID,
    title: doc.title,
    revision: doc.revision,
    blocks: doc.blocks,
    surfaces: doc.surfaces.map((s) => ({
      surfaceID: s.surfaceID,
      sourceAssetID: s.sourceAssetID,
      sourceDigest: s.sourceDigest,
      sourcePageCount: s.sourcePageCount,
      annotations: s.annotations,
    })),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

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
    const parsed = await PDFDocument.load(body, { updateMetadata: false }).catch(() => null);
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

export function notesRoutes(rt: NotesRuntime): RestRoute[] {
  const store = () => rt.kernel().store;
  const blobs = () => rt.kernel().blobs;

  return [
    {
      method: 'POST',
      path: 'notes/projects',
      summary: 'Create a project {name}',
      handler: async ({ body }) => {
        const parsed = validateInput(ProjectBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { name } = parsed.value;
        const created = await store().transaction(async (tx) => {
          if ((await listProjects(tx)).some((p) => p.name === name)) return null;
          const project = { projectID: randomUUID(), name, createdAt: Date.now() };
          await tx.records.put(PROJECTS, project.projectID, project);
          return project;
        });
        if (!created) return bad(`A project named '${name}' exists already; choose another name.`);
        return { status: 201, body: { projectID: created.projectID, name: created.name } };
      },
    },
    {
      method: 'GET',
      path: 'notes/projects',
      summary: 'Projects',
      handler: async () => ({
        status: 200,
        body: {
          projects: (await store().read(listProjects)).map((p) => ({
            projectID: p.projectID,
            name: p.name,
            createdAt: p.createdAt,
          })),
        },
      }),
    },
    {
      method: 'POST',
      path: 'notes/documents',
      summary: 'Create a document {projectID (id or name), title}',
      handler: async ({ body }) => {
        const parsed = validateInput(DocumentBody, body ?? {});
        if (!parsed.ok) return parsed;
        const input = parsed.value;
        const result = await store().transaction(async (tx) => {
          const project =
            (await getProject(tx, input.projectID)) ??
            (await listProjects(tx)).find((p) => p.name === input.projectID);
          if (!project) return 'noProject' as const;
          const documentID = input.documentID ?? randomUUID();
          if (await getDocument(tx, documentID)) return 'exists' as const;
          const now = Date.now();
          await putDocument(tx, {
            documentID,
            projectID: project.projectID,
            title: input.title,
            revision: 0,
            blocks: [],
            surfaces: [],
            createdAt: now,
            updatedAt: now,
          });
          return { documentID, revision: 0 };
        });
        if (result === 'noProject')
          return failure(
            'notFound',
            `No project ${input.projectID}; GET /api/v1/notes/projects lists them.`,
          );
        if (result === 'exists') return bad(`Document ${input.documentID} exists already.`);
        return { status: 201, body: result };
      },
    },
    {
      method: 'GET',
      path: 'notes/documents',
      summary: 'Documents, optionally of one project (?projectID=)',
      handler: async ({ query }) => {
        const projectID = query.get('projectID') ?? undefined;
        const docs = await store().read((tx) => listDocuments(tx, projectID));
        return {
          status: 200,
          body: {
            documents: docs.map((d) => ({
              documentID: d.documentID,
              projectID: d.projectID,
              title: d.title,
              revision: d.revision,
            })),
          },
        };
      },
    },
    {
      method: 'GET',
      path: 'notes/documents/{id}',
      summary: 'One document with its text blocks and PDF surfaces',
      handler: async ({ params }) => {
        const doc = await store().read((tx) => getDocument(tx, params.id!));
        return doc ? { status: 200, body: summary(doc) } : missingDocument(params.id!);
      },
    },
    {
      method: 'POST',
      path: 'notes/documents/{id}/blocks',
      summary: 'Append a text block typed by the owner {text}',
      handler: async ({ params, body }) => {
        const parsed = validateInput(BlockBody, body ?? {});
        if (!parsed.ok) return parsed;
        const doc = await store().transaction(async (tx) => {
          const current = await getDocument(tx, params.id!);
          if (!current) return null;
          const now = Date.now();
          const next: NoteDocument = {
            ...current,
            revision: current.revision + 1,
            blocks: [
              ...current.blocks,
              { text: parsed.value.text, at: now, author: 'owner', operationID: null },
            ],
            updatedAt: now,
          };
          await putDocument(tx, next);
          return next;
        });
        return doc
          ? { status: 201, body: { documentID: doc.documentID, revision: doc.revision } }
          : missingDocument(params.id!);
      },
    },
    {
      method: 'POST',
      path: 'notes/documents/{id}/pdfs',
      summary: 'Upload a PDF (raw application/pdf body) as a new surface of the document',
      maxBodyBytes: 64 * 1024 * 1024,
      handler: async ({ params, body }) => {
        const pdf = await uploadedPdf(body);
        if ('ok' in pdf) return pdf;
        await blobs().put(pdf.bytes);
        const surface: Surface = {
          surfaceID: randomUUID(),
          sourceAssetID: randomUUID(),
          sourceDigest: pdf.digest,
          sourcePageCount: pdf.pages,
          currentDigest: pdf.digest,
          annotations: [],
          createdAt: Date.now(),
        };
        const doc = await store().transaction(async (tx) => {
          const current = await getDocument(tx, params.id!);
          if (!current) return null;
          const next = {
            ...current,
            revision: current.revision + 1,
            surfaces: [...current.surfaces, surface],
            updatedAt: Date.now(),
          };
          await putDocument(tx, next);
          return next;
        });
        if (!doc) return missingDocument(params.id!);
        return {
          status: 201,
          body: {
            surfaceID: surface.surfaceID,
            sourceAssetID: surface.sourceAssetID,
            sourceDigest: surface.sourceDigest,
            sourcePageCount: surface.sourcePageCount,
            revision: doc.revision,
          },
        };
      },
    },
    {
      method: 'PUT',
      path: 'notes/documents/{id}/pdfs/{surfaceID}',
      summary:
        'Replace a surface’s source PDF (raw application/pdf body): a new source asset, earlier annotations dropped',
      maxBodyBytes: 64 * 1024 * 1024,
      handler: async ({ params, body }) => {
        const pdf = await uploadedPdf(body);
        if ('ok' in pdf) return pdf;
        await blobs().put(pdf.bytes);
        const replacement = {
          sourceAssetID: randomUUID(),
          sourceDigest: pdf.digest,
          sourcePageCount: pdf.pages,
          currentDigest: pdf.digest,
          annotations: [],
        };
        const doc = await store().transaction(async (tx) => {
          const current = await getDocument(tx, params.id!);
          if (!current?.surfaces.some((s) => s.surfaceID === params.surfaceID)) return null;
          const next = {
            ...current,
            revision: current.revision + 1,
            surfaces: current.surfaces.map((s) =>
              s.surfaceID === params.surfaceID ? { ...s, ...replacement } : s,
            ),
            updatedAt: Date.now(),
          };
          await putDocument(tx, next);
          return next;
        });
        if (!doc)
          return failure('notFound', `No surface ${params.surfaceID} on document ${params.id}.`);
        return {
          status: 200,
          body: {
            surfaceID: params.surfaceID,
            sourceAssetID: replacement.sourceAssetID,
            sourceDigest: replacement.sourceDigest,
            sourcePageCount: replacement.sourcePageCount,
            revision: doc.revision,
          },
        };
      },
    },
    {
      method: 'GET',
      path: 'notes/documents/{id}/pdfs/{surfaceID}',
      summary: 'Download a surface’s PDF with its annotations',
      handler: async ({ params }) => {
        const doc = await store().read((tx) => getDocument(tx, params.id!));
        const surface = doc?.surfaces.find((s) => s.surfaceID === params.surfaceID);
        if (!surface)
          return failure('notFound', `No surface ${params.surfaceID} on document ${params.id}.`);
        const bytes = await blobs().get(surface.currentDigest);
        if (!bytes) return failure('internal', 'The PDF bytes are missing from the blob store.');
        return {
          status: 200,
          raw: { bytes, contentType: 'application/pdf', filename: `${params.surfaceID}.pdf` },
        };
      },
    },
    {
      method: 'GET',
      path: 'notes/writes',
      summary: 'Agent writes with provenance, oldest first (?documentID=)',
      handler: async ({ query }) => {
        const documentID = query.get('documentID') ?? undefined;
        const writes = await store().read((tx) => listWrites(tx, documentID));
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
