/**
 * The owner's notes documents over REST: create one in a project (named by id
 * or name), list them, read one whole, and append a typed text block.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { failure, utf8String, uuidString, validateInput } from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import {
  createDocument,
  getDocument,
  getProject,
  listDocuments,
  listProjects,
  newDocument,
  readBlocks,
  type Block,
  type NoteDocument,
} from './documents.js';
import { bad, missingDocument, reviseDocument } from './rest.js';
import type { NotesRuntime } from './runtime.js';
import { charString } from './schemas.js';

const DocumentBody = z
  .object({
    projectID: z.string().min(1),
    title: charString(1, 200),
    documentID: uuidString().optional(),
  })
  .strict();
const BlockBody = z.object({ text: utf8String(1, 1_000_000) }).strict();

function summary(doc: NoteDocument, blocks: Block[]) {
  return {
    documentID: doc.documentID,
    projectID: doc.projectID,
    title: doc.title,
    revision: doc.revision,
    blocks,
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

export function documentRoutes(rt: NotesRuntime): RestRoute[] {
  const store = () => rt.kernel().store;
  return [
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
          await createDocument(tx, newDocument(documentID, project.projectID, input.title));
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
        const found = await store().read(async (tx) => {
          const doc = await getDocument(tx, params.id!);
          return doc && summary(doc, await readBlocks(tx, doc.documentID));
        });
        return found ? { status: 200, body: found } : missingDocument(params.id!);
      },
    },
    {
      method: 'POST',
      path: 'notes/documents/{id}/blocks',
      summary: 'Append a text block typed by the owner {text}',
      handler: async ({ params, body }) => {
        const parsed = validateInput(BlockBody, body ?? {});
        if (!parsed.ok) return parsed;
        const doc = await reviseDocument(rt, params.id!, (_current, now) => ({
          block: { text: parsed.value.text, at: now, author: 'owner', operationID: null },
        }));
        return doc
          ? { status: 201, body: { documentID: doc.documentID, revision: doc.revision } }
          : missingDocument(params.id!);
      },
    },
  ];
}
