/**
 * Property suite: random malformed arguments (a field dropped, an unknown one
 * added, a field replaced by junk, or any JSON object), kept only when the
 * tool's schema rejects them, are thrown at a tool. Every answer must be a
 * well-formed envelope coded malformedRequest or requestTooLarge, and nothing
 * may be written. Split over several files so they run in parallel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EnvelopeSchema } from '../../../src/doors/notes/envelope.js';
import { notesHarness, provenance, uuid, type Harness } from './harness.js';
import { samplePdf } from './fixtures.js';

let h: Harness;
let documentID: string;
let surfaceID: string;

beforeAll(async () => {
  h = await notesHarness();
  const p = await h.project('P');
  documentID = await h.document(p);
  surfaceID = (
    await h.rest('POST', `notes/documents/${documentID}/pdfs`, Buffer.from(await samplePdf()))
  ).body.surfaceID;
  for (const c of ['read', 'write', 'pdfAnnotate'] as const) await h.grant(c, p);
});
afterAll(async () => h.dispose());

// Issue #4 asks for at least 5,000 malformed inputs per tool: CI runs that many
// (about 60,000 calls, minutes on 2 cores); a local run takes 400 per tool
// unless NOTES_PROPERTY_RUNS says otherwise.
const RUNS = Number(process.env.NOTES_PROPERTY_RUNS ?? (process.env.CI ? 5_000 : 400));

/** A valid argument object per tool, from which malformed ones are derived. */
const valid = (): Record<string, Record<string, unknown>> => ({
  rooqi_status: {},
  rooqi_request_read_access: {},
  rooqi_list_approved_documents: {},
  rooqi_read_note: { documentID },
  rooqi_request_write_access: {},
  rooqi_create_note: { operationID: uuid(), documentID: uuid(), title: 't', ...provenance },
  rooqi_append_text: {
    operationID: uuid(),
    documentID,
    text: 'x',
    expectedVersion: 0,
    ...provenance,
  },
  rooqi_request_pdf_annotation_access: {},
  rooqi_list_pdf_targets: { documentID },
  rooqi_read_pdf_page: {
    documentID,
    surfaceID,
    pageIndex: 0,
    rect: { x: 0, y: 0, width: 100_000, height: 100_000 },
  },
  rooqi_annotate_pdf: {
    operationID: uuid(),
    query: {
      documentID,
      surfaceID,
      pageIndex: 0,
      rect: { x: 0, y: 0, width: 100_000, height: 100_000 },
    },
    expectedVersion: 1,
    sourceAssetID: uuid(),
    sourceDigest: 'a'.repeat(64),
    geometryDigest: 'b'.repeat(64),
    selectionTextDigest: 'c'.repeat(64),
    kind: 'highlight',
    comment: '',
    ...provenance,
  },
  rooqi_query_pdf_operation: { documentID, operationID: uuid() },
});

const junk = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  fc.constant('€'.repeat(2001)),
  fc.constant(-1),
  fc.constant(1_000_001),
);

/** A valid object made malformed: a field dropped, an unknown field added, or a field replaced by junk. */
function malformed(base: Record<string, unknown>) {
  const keys = Object.keys(base);
  const drop = fc.constantFrom(...(keys.length ? keys : ['none'])).map((k) => {
    const copy = { ...base };
    delete copy[k];
    return copy;
  });
  const extra = fc
    .tuple(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !keys.includes(k)),
      junk,
    )
    .map(([k, v]) => ({ ...base, [k]: v }));
  const replace = keys.length
    ? fc.tuple(fc.constantFrom(...keys), junk).map(([k, v]) => ({ ...base, [k]: v }))
    : extra;
  const anything = fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), {
    maxKeys: 6,
  });
  return fc.oneof(drop, extra, replace, anything);
}

export const TOOL_NAMES = Object.keys(valid());

export function malformedInputSuite(tools: string[]) {
  describe('property: malformed input', () => {
    for (const tool of tools) {
      it(`${tool}: ${RUNS} malformed inputs all answer a well-formed envelope and write nothing`, async () => {
        const schema = h.door.tools.find((t) => t.name === tool)!.input;
        const before = JSON.stringify(
          await h.tk.kernel.store.read((tx) => tx.records.list('notes.documents')),
        );
        await fc.assert(
          fc.asyncProperty(
            malformed(valid()[tool]!).filter((args) => !schema.safeParse(args).success),
            async (args) => {
              const r = await h.call(tool, args);
              expect(r.content).toHaveLength(1);
              const env = EnvelopeSchema.strict().parse(JSON.parse(String(r.content[0]!.text)));
              expect(r.isError).toBe(true);
              expect(['malformedRequest', 'requestTooLarge']).toContain(env.code);
            },
          ),
          { numRuns: RUNS },
        );
        const after = JSON.stringify(
          await h.tk.kernel.store.read((tx) => tx.records.list('notes.documents')),
        );
        expect(after).toBe(before);
        expect(await h.tk.kernel.store.read((tx) => tx.records.list('notes.writes'))).toEqual([]);
      }, 400_000);
    }
  });
}
