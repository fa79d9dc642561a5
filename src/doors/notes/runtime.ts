/**
 * What the notes tools and routes share once the kernel has started the door:
 * the kernel, the receipt signer, the grant check, and a small cache of page
 * text layers (sources are immutable, so a page read once stays valid).
 */
import { AirlockError, type Grant, type Kernel, type StoreTx } from '../../kernel/index.js';
import { getDocument, type NoteDocument } from './documents.js';
import { readPageText, type PageText } from './pdf-text.js';
import type { ReceiptSigner } from './receipts.js';

/**
 * Test seams: delays that let tests hold a call in flight or inside its
 * write; `signal` is the call's, aborted at its deadline, so a test can hold
 * a call exactly until then instead of sleeping past it.
 */
export interface NotesHooks {
  beforeHandler?(tool: string, signal: AbortSignal): Promise<void>;
  insideWrite?(tool: string, signal: AbortSignal): Promise<void>;
}

export interface NotesRuntime {
  readonly mount: string;
  readonly prefix: string;
  readonly hooks: NotesHooks;
  kernel(): Kernel;
  signer(): ReceiptSigner;
  /** The text layer of a page of a source asset (by its digest). */
  pageText(sourceDigest: string, pageIndex: number): Promise<PageText>;
}

export function createRuntime(options: { mount: string; prefix: string; hooks?: NotesHooks }) {
  let kernel: Kernel | undefined;
  let signer: ReceiptSigner | undefined;
  const cache = new Map<string, PageText>();
  const runtime: NotesRuntime & { bind(k: Kernel, s: ReceiptSigner): void } = {
    mount: options.mount,
    prefix: options.prefix,
    hooks: options.hooks ?? {},
    bind(k, s) {
      kernel = k;
      signer = s;
    },
    kernel() {
      if (!kernel) throw new Error('the notes door has not been started');
      return kernel;
    },
    signer() {
      if (!signer) throw new Error('the notes door has not been started');
      return signer;
    },
    async pageText(sourceDigest, pageIndex) {
      const key = `${sourceDigest}:${pageIndex}`;
      const hit = cache.get(key);
      if (hit) return hit;
      const bytes = await runtime.kernel().blobs.get(sourceDigest);
      if (!bytes) throw new Error(`source asset ${sourceDigest} is missing from the blob store`);
      const page = await readPageText(bytes, pageIndex);
      if (cache.size >= 64) cache.delete(cache.keys().next().value!);
      cache.set(key, page);
      return page;
    },
  };
  return runtime;
}

/** The project a grant covers. */
export function grantedProject(grant: Grant | null): string {
  const id = grant?.resource?.id;
  if (!id) {
    throw new AirlockError(
      'notAuthorized',
      'This grant names no project; request access again and ask the owner to pick a project.',
    );
  }
  return id;
}

/** A document inside the granted project, or notFound / notAuthorized. */
export async function authorizedDocument(
  tx: StoreTx,
  grant: Grant | null,
  documentID: string,
): Promise<NoteDocument> {
  const projectID = grantedProject(grant);
  const doc = await getDocument(tx, documentID);
  // One answer whether the document is missing or in a project this connection
  // was not granted: no existence oracle across projects (authority.md §2).
  if (!doc || doc.projectID !== projectID) {
    throw new AirlockError(
      'notAuthorized',
      `Document ${documentID} is not one this connection may use; call rooqi_list_approved_documents for the documents of the granted project.`,
    );
  }
  return doc;
}
