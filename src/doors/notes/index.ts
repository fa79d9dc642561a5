/**
 * Door `notes` (spec/notes.md): a person's private documents, reached only
 * with their consent, RooQi-compatible. Twelve `rooqi_*` tools answer in the
 * RooQi response envelope; consent, limits, the journal and audit are the
 * kernel's. Owners use the REST routes under `/api/v1/notes/`.
 *
 * @example
 * const [notes] = await createNotesDoors(doorContext);
 * kernel.mount(notes);
 */
import type { DoorContext } from '../context.js';
import type { ServedDoor } from '../../transport/surface.js';
import {
  DEFAULT_LIMITS,
  operationOf,
  type AnyToolDef,
  type JournalEntry,
  type Limits,
  type Resolution,
} from '../../kernel/index.js';
import { ENVELOPE_MAX_BYTES, notesPresenter } from './envelope.js';
import { getWrite, listProjects, upgradeLayout } from './documents.js';
import { loadReceiptSigner } from './receipts.js';
import { createRuntime, type NotesHooks } from './runtime.js';
import { accessTools } from './tools-access.js';
import { noteTools } from './tools-notes.js';
import { pdfTools } from './tools-pdf.js';
import { notesRoutes } from './routes.js';
import { NotesConfig } from './config.js';

/**
 * The reference's limits: 16,384-byte arguments and envelopes, 8 calls in
 * flight per connection, 8 s per call. The envelope cap is enforced exactly
 * by the presenter; the kernel's `responseBytes` bounds the whole wrapped
 * result (the envelope appears twice, as text and as structuredContent, with
 * JSON escaping), so it is set to what a 16,384-byte envelope can become.
 */
export const NOTES_LIMITS: Limits = {
  requestBytes: 16_384,
  responseBytes: 4 * ENVELOPE_MAX_BYTES + 1024,
  concurrentCalls: 8,
  timeoutMs: 8_000,
  // The 16 KB envelope is far below the token budget.
  resultTokens: DEFAULT_LIMITS.resultTokens,
};

export interface NotesDoorOptions {
  /** Tool-name prefix (default `rooqi`, the reference's). */
  prefix?: string;
  /** Test seams only. */
  hooks?: NotesHooks;
}

export function createNotesDoor(options: NotesDoorOptions = {}): ServedDoor {
  const mount = 'notes';
  const rt = createRuntime({ mount, prefix: options.prefix ?? 'rooqi', hooks: options.hooks });
  const hooks = rt.hooks;
  // The reference's order: status, then each capability's request tool before its tools.
  const [status, requestRead, requestWrite, requestPdf] = accessTools(rt);
  const [list, read, create, append] = noteTools(rt);
  const tools = [
    status,
    requestRead,
    list,
    read,
    requestWrite,
    create,
    append,
    requestPdf,
    ...pdfTools(rt),
  ] as AnyToolDef[];
  const wrapped = hooks.beforeHandler
    ? tools.map((t): AnyToolDef => ({
        ...t,
        handler: async (input, ctx) => {
          await hooks.beforeHandler?.(t.name, ctx.signal);
          return t.handler(input, ctx);
        },
      }))
    : tools;

  return {
    name: 'notes',
    tools: wrapped,
    // The capability a call needs and the project of the grant it would use (name or id).
    targetForms: ['read:<project>', 'write:<project>', 'pdfAnnotate:<project>'],
    limits: NOTES_LIMITS,
    mcp: {
      presenter: notesPresenter,
      instructions:
        'Notes door (RooQi-compatible): request read, write or PDF annotation access first; the owner approves one project for 15 minutes. Every answer is an envelope {code, message?, resultJSON?}. Reuse operationID and documentID unchanged on retry; after mutationUncertain never switch to a new operationID.',
    },
    http: { routes: notesRoutes(rt) },
    async start(kernel) {
      // Documents stored by an older Airlock (blocks inline) move to records of their own.
      await kernel.store.transaction(upgradeLayout);
      rt.bind(kernel, await loadReceiptSigner(kernel.store));
    },
    async resources() {
      const projects = await rt.kernel().store.read(listProjects);
      return projects.map((p) => ({ id: p.projectID, name: p.name }));
    },
    // A write commits with its journal entry and its write record; the record decides.
    async resolveOperation(entry: JournalEntry): Promise<Resolution> {
      if (!entry.target) return { exists: false };
      const written = await rt
        .kernel()
        .store.read((tx) => getWrite(tx, entry.target!, operationOf(entry.operationId)));
      return written ? { exists: true, receipt: written.receipt } : { exists: false };
    },
  };
}

export async function createNotesDoors(ctx: DoorContext): Promise<ServedDoor[]> {
  // The CLI checked the section before the workspace opened; a library caller gets the same check here.
  const parsed = NotesConfig.safeParse(ctx.config.notes ?? {});
  if (!parsed.success)
    throw new Error(`config file: notes: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const prefix = parsed.data.prefix;
  return [createNotesDoor(prefix ? { prefix } : {})];
}
