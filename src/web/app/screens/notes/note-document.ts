/**
 * One notes document: its saved text blocks with each block's provenance
 * (who wrote it, provider, model, promptVersion, when), adding text, PDF
 * surfaces (upload, view, download), agent writes with their receipts, and
 * receipt verification. Agent writes arrive live (audit events).
 */
import { download, get, post, request } from '../../api.js';
import { busy, fill, h } from '../../dom.js';
import { showError } from '../../errors.js';
import { form, messageOf, refuse } from '../../form.js';
import { time } from '../../format.js';
import { live, subscribe } from '../../live.js';
import { href } from '../../router.js';
import type { Screen } from '../screen.js';

interface Provenance {
  provider: string;
  model: string;
  promptVersion: string;
}
interface Block {
  text: string;
  at: number;
  author: 'owner' | 'agent';
  operationID: string | null;
}
export interface Annotation {
  operationID: string;
  kind: string;
  pageIndex: number;
  rect: { x: number; y: number; width: number; height: number };
  comment: string;
  at: number;
}
export interface SurfaceInfo {
  surfaceID: string;
  sourceAssetID: string;
  sourceDigest: string;
  sourcePageCount: number;
  annotations: Annotation[];
}
export interface NoteDocument {
  documentID: string;
  projectID: string;
  title: string;
  revision: number;
  blocks: Block[];
  surfaces: SurfaceInfo[];
}
interface WriteRecord {
  operationID: string;
  tool: string;
  committedRevision: number;
  provenance: Provenance;
  connection: string;
  at: number;
  receipt: Record<string, unknown>;
}

export async function verifyReceipt(receipt: unknown): Promise<boolean> {
  return (await post<{ valid: boolean }>('notes/receipts/verify', receipt)).valid;
}

function verdict(el: HTMLElement, valid: boolean): void {
  el.className = valid ? 'verdict-ok' : 'verdict-bad';
  el.textContent = valid
    ? 'Valid: this workspace issued the receipt and it is unchanged.'
    : 'Not valid: this workspace did not issue this receipt, or it was altered.';
}

function blockItem(b: Block, index: number, writes: Map<string, WriteRecord>): HTMLElement {
  const w = b.operationID ? writes.get(b.operationID) : undefined;
  const who =
    b.author === 'agent' && w
      ? `Agent · ${w.provenance.provider} · ${w.provenance.model} · prompt ${w.provenance.promptVersion}`
      : b.author === 'agent'
        ? 'Agent'
        : 'Owner';
  return h(
    'li',
    { class: 'block', 'data-author': b.author, 'aria-label': `Block ${index + 1}` },
    h('p', {}, b.text),
    h('p', { class: 'meta provenance' }, `${who} · ${time(b.at)}`),
  );
}

/** Adds the owner's text as a block at the end of the document. */
function addTextForm(id: string, load: () => Promise<void>): HTMLFormElement {
  const text = h('textarea', { id: 'add-text', name: 'text', required: true, rows: 4 });
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add text');
  const addProblem = h('p', { class: 'result-err', role: 'alert' });
  const addForm = h(
    'form',
    { class: 'stack-form' },
    h('label', { for: 'add-text' }, 'Text to add', text),
    h('div', { class: 'row' }, add),
    addProblem,
  );
  return form(addForm, {
    button: add,
    clear: [addProblem],
    send: async () => {
      await post(`notes/documents/${encodeURIComponent(id)}/blocks`, { text: text.value });
      text.value = '';
      await load();
      text.focus();
    },
    failed: addProblem,
  });
}

/** Uploads a PDF into the document; `status` says what became of it. */
function uploadPdfForm(
  id: string,
  load: () => Promise<void>,
): { form: HTMLFormElement; status: HTMLElement } {
  const file = h('input', {
    id: 'pdf-file',
    name: 'pdf',
    type: 'file',
    accept: 'application/pdf,.pdf',
  });
  const upload = h('button', { type: 'submit' }, 'Upload PDF');
  const uploadStatus = h('p', { class: 'meta', role: 'status' });
  const uploadForm = h(
    'form',
    { class: 'row' },
    h('label', { for: 'pdf-file' }, 'PDF file', file),
    upload,
  );
  form(uploadForm, {
    button: upload,
    read: () => file.files?.[0] ?? refuse('Choose a PDF file first.'),
    send: async (chosen) => {
      await request('POST', `notes/documents/${encodeURIComponent(id)}/pdfs`, {
        raw: { bytes: chosen, type: 'application/pdf' },
      });
      uploadStatus.textContent = `Uploaded ${chosen.name}.`;
      file.value = '';
      await load();
    },
    failed: uploadStatus,
  });
  return { form: uploadForm, status: uploadStatus };
}

/** Asks the server whether a receipt an agent got is genuine. */
function verifyReceiptForm(): HTMLFormElement {
  const receipt = h('textarea', {
    id: 'receipt',
    name: 'receipt',
    rows: 4,
    placeholder: '{"operationID": …, "ownerProofSHA256": …}',
  });
  const verify = h('button', { type: 'submit' }, 'Verify receipt');
  const result = h('p', { role: 'status', id: 'receipt-verdict' });
  const verifyForm = h(
    'form',
    { class: 'stack-form' },
    h('label', { for: 'receipt' }, 'Receipt (JSON)', receipt),
    h('div', { class: 'row' }, verify),
    result,
  );
  return form(verifyForm, {
    button: verify,
    read: () => {
      try {
        return { parsed: JSON.parse(receipt.value) as unknown };
      } catch {
        return refuse('That is not JSON; paste the receipt exactly as the agent got it.');
      }
    },
    send: async ({ parsed }) => verdict(result, await verifyReceipt(parsed)),
    failed: (err) => {
      result.className = 'verdict-bad';
      result.textContent = messageOf(err);
    },
  });
}

export const documentScreen: Screen = (root, route) => {
  const id = route.params[1]!;
  const heading = h('h1', { tabindex: '-1' }, 'Document');
  const meta = h('p', { class: 'meta' });
  const blocks = h('ol', { class: 'blocks', id: 'blocks' });
  const surfaces = h('ul', { class: 'cards', id: 'surfaces' });
  const writesList = h('ul', { class: 'cards', id: 'writes' });
  let doc: NoteDocument | null = null;

  const load = async () => {
    try {
      const [d, w] = await Promise.all([
        get<NoteDocument>(`notes/documents/${encodeURIComponent(id)}`),
        get<{ writes: WriteRecord[] }>(`notes/writes?documentID=${encodeURIComponent(id)}`),
      ]);
      doc = d;
      heading.textContent = d.title;
      document.title = `${d.title} · Notes · Airlock workspace`;
      meta.textContent = `Revision ${d.revision} · ${d.blocks.length} blocks · ${d.surfaces.length} PDFs`;
      const byOp = new Map(w.writes.map((x) => [x.operationID, x]));
      fill(
        blocks,
        ...(d.blocks.length
          ? d.blocks.map((b, i) => blockItem(b, i, byOp))
          : [h('li', { class: 'empty' }, 'No text yet.')]),
      );
      fill(
        surfaces,
        ...d.surfaces.map((s, i) =>
          h(
            'li',
            { class: 'card', 'data-surface-id': s.surfaceID },
            h('h3', {}, `PDF ${i + 1}`),
            h(
              'p',
              { class: 'meta' },
              `${s.sourcePageCount} pages · ${s.annotations.length} annotations · source ${s.sourceDigest.slice(0, 12)}…`,
            ),
            h(
              'div',
              { class: 'row' },
              h(
                'a',
                { class: 'button', href: href('notes', 'pdf', d.documentID, s.surfaceID) },
                `View PDF ${i + 1}`,
              ),
              downloadButton(d, s, i),
            ),
          ),
        ),
      );
      fill(
        writesList,
        ...(w.writes.length
          ? w.writes
              .slice()
              .reverse()
              .map((x) => writeItem(x))
          : [h('li', { class: 'empty' }, 'No agent writes yet.')]),
      );
    } catch (e) {
      showError(e, 'Could not load the document');
    }
  };

  const addForm = addTextForm(id, load);
  const { form: uploadForm, status: uploadStatus } = uploadPdfForm(id, load);
  const verifyForm = verifyReceiptForm();

  fill(
    root,
    h('p', {}, h('a', { href: '#/notes' }, '← All projects')),
    heading,
    meta,
    h(
      'section',
      { 'aria-labelledby': 'blocks-title' },
      h('h2', { id: 'blocks-title' }, 'Text'),
      blocks,
      addForm,
    ),
    h(
      'section',
      { 'aria-labelledby': 'pdfs-title' },
      h('h2', { id: 'pdfs-title' }, 'PDFs'),
      surfaces,
      uploadForm,
      uploadStatus,
    ),
    h(
      'section',
      { 'aria-labelledby': 'writes-title' },
      h('h2', { id: 'writes-title' }, 'Agent writes and receipts'),
      writesList,
    ),
    h(
      'section',
      { 'aria-labelledby': 'verify-title' },
      h('h2', { id: 'verify-title' }, 'Verify a receipt'),
      verifyForm,
    ),
  );
  void load();
  // An agent's write is audited; reload when one touches notes.
  return subscribe('event', () => {
    const e = live().lastEvent;
    const entry =
      e?.event === 'auditRecorded' ? (e.entry as { door?: string; result?: string }) : null;
    if (entry?.door === 'notes' && entry.result === 'ok' && doc) void load();
  });
};

function downloadButton(d: NoteDocument, s: SurfaceInfo, i: number): HTMLButtonElement {
  const button = h('button', { type: 'button' }, `Download PDF ${i + 1}`);
  button.addEventListener(
    'click',
    () =>
      void busy(button, async () => {
        try {
          await download(
            `notes/documents/${encodeURIComponent(d.documentID)}/pdfs/${encodeURIComponent(s.surfaceID)}`,
            `${d.title.replace(/[^\w.-]+/g, '_')}-${i + 1}.pdf`,
          );
        } catch (e) {
          showError(e, 'Download failed');
        }
      }),
  );
  return button;
}

function writeItem(w: WriteRecord): HTMLElement {
  const out = h('span', { role: 'status' });
  const check = h('button', { type: 'button' }, 'Verify');
  check.setAttribute(
    'aria-label',
    `Check the receipt of ${w.tool} at revision ${w.committedRevision}`,
  );
  check.addEventListener(
    'click',
    () =>
      void busy(check, async () => {
        try {
          verdict(out, await verifyReceipt(w.receipt));
        } catch (e) {
          out.textContent = (e as Error).message;
        }
      }),
  );
  return h(
    'li',
    { class: 'card', 'data-operation-id': w.operationID },
    h('h3', {}, `${w.tool} → revision ${w.committedRevision}`),
    h(
      'p',
      { class: 'meta' },
      `${w.provenance.provider} · ${w.provenance.model} · prompt ${w.provenance.promptVersion} · ${time(w.at)}`,
    ),
    h('p', { class: 'meta' }, `operationID ${w.operationID}`),
    h('div', { class: 'row' }, check, out),
  );
}
