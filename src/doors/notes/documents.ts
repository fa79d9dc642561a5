/**
 * The notes data model (spec/notes.md "Data") kept in the kernel's store as
 * record collections, so it lives in SQLite or PostgreSQL like everything
 * else. PDF bytes are content-addressed blobs: a surface's source asset is
 * the blob named by its `sourceDigest`; the annotated file is another blob.
 */
import type { Provenance, StoreTx } from '../../kernel/index.js';
import type { Rect } from './schemas.js';

export const PROJECTS = 'notes.projects';
export const DOCUMENTS = 'notes.documents';
/** Agent writes, keyed `<documentID>/<operationID>`. */
export const WRITES = 'notes.writes';
export const OWNER = 'notes.owner';

export interface Project {
  projectID: string;
  name: string;
  createdAt: number;
}

export interface Block {
  text: string;
  at: number;
  author: 'owner' | 'agent';
  operationID: string | null;
}

export interface AnnotationRecord {
  operationID: string;
  kind: 'highlight' | 'underline' | 'comment';
  pageIndex: number;
  rect: Rect;
  comment: string;
  at: number;
}

export interface Surface {
  surfaceID: string;
  /** Immutable source asset; a re-upload gives a new one. */
  sourceAssetID: string;
  /** SHA-256 of the source bytes (also its blob key). */
  sourceDigest: string;
  sourcePageCount: number;
  /** Blob key of the source plus every annotation so far (incremental updates). */
  currentDigest: string;
  annotations: AnnotationRecord[];
  createdAt: number;
}

export interface NoteDocument {
  documentID: string;
  projectID: string;
  title: string;
  /** 0 at creation, +1 per committed write (agent or owner). */
  revision: number;
  blocks: Block[];
  surfaces: Surface[];
  createdAt: number;
  updatedAt: number;
}

export interface Receipt {
  operationID: string;
  documentID: string;
  committedRevision: number;
  ownerProofSHA256: string;
}

export interface WriteRecord {
  operationID: string;
  documentID: string;
  tool: string;
  committedRevision: number;
  provenance: Provenance;
  connection: string;
  at: number;
  receipt: Receipt;
  /** What changed: a block's byte count, or the annotation. */
  detail: Record<string, unknown>;
}

export const getDocument = async (tx: StoreTx, id: string) =>
  (await tx.records.get<NoteDocument>(DOCUMENTS, id))?.value ?? null;

/** A new, empty document at revision 0 (the owner's REST route and the agent's tool alike). */
export function newDocument(documentID: string, projectID: string, title: string): NoteDocument {
  const now = Date.now();
  return {
    documentID,
    projectID,
    title,
    revision: 0,
    blocks: [],
    surfaces: [],
    createdAt: now,
    updatedAt: now,
  };
}

export const putDocument = (tx: StoreTx, doc: NoteDocument) =>
  tx.records.put(DOCUMENTS, doc.documentID, doc);

export const getProject = async (tx: StoreTx, id: string) =>
  (await tx.records.get<Project>(PROJECTS, id))?.value ?? null;

export const listProjects = async (tx: StoreTx) =>
  (await tx.records.list<Project>(PROJECTS)).map((r) => r.value);

export const listDocuments = async (tx: StoreTx, projectID?: string) =>
  (await tx.records.list<NoteDocument>(DOCUMENTS))
    .map((r) => r.value)
    .filter((d) => projectID === undefined || d.projectID === projectID);

export const writeKey = (documentID: string, operationID: string) => `${documentID}/${operationID}`;

export const getWrite = async (tx: StoreTx, documentID: string, operationID: string) =>
  (await tx.records.get<WriteRecord>(WRITES, writeKey(documentID, operationID)))?.value ?? null;

export const putWrite = (tx: StoreTx, w: WriteRecord) =>
  tx.records.put(WRITES, writeKey(w.documentID, w.operationID), w);

export const listWrites = async (tx: StoreTx, documentID?: string) =>
  (await tx.records.list<WriteRecord>(WRITES, documentID ? { prefix: `${documentID}/` } : {}))
    .map((r) => r.value)
    .sort((p, q) => p.at - q.at || p.committedRevision - q.committedRevision);

/** The text `read_note` returns: saved blocks only, separated by a blank line. */
export const noteText = (doc: NoteDocument) => doc.blocks.map((b) => b.text).join('\n\n');
