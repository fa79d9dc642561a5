/**
 * The notes data model (spec/notes.md "Data") kept in the kernel's store as
 * record collections, so it lives in SQLite or PostgreSQL like everything
 * else. PDF bytes are content-addressed blobs: a surface's source asset is
 * the blob named by its `sourceDigest`; the annotated file is another blob.
 *
 * Costs follow the request (issue #16): a document record holds only its
 * metadata (no text); each text block is a record of its own
 * (`<documentID>/<index>`), so an append writes one block and the small
 * metadata, whatever the document's size; and each project keeps an index
 * of its documents (`<projectID>/<documentID>` → title), so listing a
 * project reads that project's index and nothing else.
 */
import type { Provenance, StoreTx } from '../../kernel/index.js';
import type { Rect } from './schemas.js';

export const PROJECTS = 'notes.projects';
export const DOCUMENTS = 'notes.documents';
/** Agent writes, keyed `<documentID>/<operationID>`. */
export const WRITES = 'notes.writes';
export const OWNER = 'notes.owner';
/** Text blocks, keyed `<documentID>/<index, 10 digits>`. */
export const BLOCKS = 'notes.blocks';
/** Each project's documents, keyed `<projectID>/<documentID>` → `{title}`. */
export const BY_PROJECT = 'notes.byProject';
/** The storage layout's version (2: blocks and the project index as records). */
const LAYOUT = 'notes.layout';
const LAYOUT_VERSION = 2;

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

/** A document's metadata; its text blocks are records of their own (`readBlocks`). */
export interface NoteDocument {
  documentID: string;
  projectID: string;
  title: string;
  /** 0 at creation, +1 per committed write (agent or owner). */
  revision: number;
  /** How many text blocks the document has (the next block's index). */
  blockCount: number;
  surfaces: Surface[];
  createdAt: number;
  updatedAt: number;
}

/** A document record as stored before blocks had records of their own. */
type StoredDocument = NoteDocument & { blocks?: Block[] };

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

export const getDocument = async (tx: StoreTx, id: string): Promise<NoteDocument | null> =>
  (await tx.records.get<NoteDocument>(DOCUMENTS, id))?.value ?? null;

/** A new, empty document at revision 0 (the owner's REST route and the agent's tool alike). */
export function newDocument(documentID: string, projectID: string, title: string): NoteDocument {
  const now = Date.now();
  return {
    documentID,
    projectID,
    title,
    revision: 0,
    blockCount: 0,
    surfaces: [],
    createdAt: now,
    updatedAt: now,
  };
}

/** Stores a new document and lists it in its project. */
export async function createDocument(tx: StoreTx, doc: NoteDocument): Promise<void> {
  await tx.records.put(DOCUMENTS, doc.documentID, doc);
  await tx.records.put(BY_PROJECT, `${doc.projectID}/${doc.documentID}`, { title: doc.title });
}

/** Stores a document's changed metadata (its blocks are written by `putBlock`). */
export const putDocument = (tx: StoreTx, doc: NoteDocument) =>
  tx.records.put(DOCUMENTS, doc.documentID, doc);

const blockKey = (documentID: string, index: number) =>
  `${documentID}/${String(index).padStart(10, '0')}`;

/**
 * Appends one text block: one record, whatever the document's size. Returns
 * the metadata with `blockCount` advanced; the caller stores it (with its
 * new revision) through `putDocument`.
 */
export async function putBlock(
  tx: StoreTx,
  doc: NoteDocument,
  block: Block,
): Promise<NoteDocument> {
  await tx.records.put(BLOCKS, blockKey(doc.documentID, doc.blockCount), block);
  return { ...doc, blockCount: doc.blockCount + 1 };
}

/** A document's text blocks, in order. */
export const readBlocks = async (tx: StoreTx, documentID: string): Promise<Block[]> =>
  (await tx.records.list<Block>(BLOCKS, { prefix: `${documentID}/` })).map((r) => r.value);

/**
 * Moves documents stored with their blocks inline (before blocks had records
 * of their own) to the current layout, and lists each in its project. Runs
 * at the door's start; a document already moved is left alone.
 */
export async function upgradeLayout(tx: StoreTx): Promise<number> {
  if ((await tx.records.get<number>(LAYOUT, 'version'))?.value === LAYOUT_VERSION) return 0;
  let moved = 0;
  for (const { value } of await tx.records.list<StoredDocument>(DOCUMENTS)) {
    if (value.blockCount !== undefined && value.blocks === undefined) continue;
    const { blocks = [], ...rest } = value;
    let doc: NoteDocument = { ...rest, blockCount: 0 };
    for (const block of blocks) doc = await putBlock(tx, doc, block);
    await putDocument(tx, doc);
    await tx.records.put(BY_PROJECT, `${doc.projectID}/${doc.documentID}`, { title: doc.title });
    moved++;
  }
  await tx.records.put(LAYOUT, 'version', LAYOUT_VERSION);
  return moved;
}

export const getProject = async (tx: StoreTx, id: string) =>
  (await tx.records.get<Project>(PROJECTS, id))?.value ?? null;

export const listProjects = async (tx: StoreTx) =>
  (await tx.records.list<Project>(PROJECTS)).map((r) => r.value);

/** A project's documents (id and title) from its index: no other project, no text. */
export const listProjectDocuments = async (tx: StoreTx, projectID: string) =>
  (await tx.records.list<{ title: string }>(BY_PROJECT, { prefix: `${projectID}/` })).map((r) => ({
    documentID: r.key.slice(projectID.length + 1),
    title: r.value.title,
  }));

/** Documents' metadata (no text), all or of one project. */
export async function listDocuments(tx: StoreTx, projectID?: string): Promise<NoteDocument[]> {
  if (projectID === undefined)
    return (await tx.records.list<NoteDocument>(DOCUMENTS)).map((r) => r.value);
  const docs: NoteDocument[] = [];
  for (const { documentID } of await listProjectDocuments(tx, projectID)) {
    const doc = await getDocument(tx, documentID);
    if (doc) docs.push(doc);
  }
  return docs;
}

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
export const noteText = (blocks: Block[]) => blocks.map((b) => b.text).join('\n\n');
