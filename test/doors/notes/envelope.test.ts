import { afterEach, describe, expect, it } from 'vitest';
import { notesHarness, provenance, textOf, uuid, type Harness } from './harness.js';
import { NOTES_LIMITS } from '../../../src/doors/notes/index.js';

let h: Harness;
afterEach(async () => h?.dispose());

const TOOLS = [
  'rooqi_status',
  'rooqi_request_read_access',
  'rooqi_list_approved_documents',
  'rooqi_read_note',
  'rooqi_request_write_access',
  'rooqi_create_note',
  'rooqi_append_text',
  'rooqi_request_pdf_annotation_access',
  'rooqi_list_pdf_targets',
  'rooqi_read_pdf_page',
  'rooqi_annotate_pdf',
  'rooqi_query_pdf_operation',
];

const REQUIRED: Record<string, string[]> = {
  rooqi_status: [],
  rooqi_request_read_access: [],
  rooqi_list_approved_documents: [],
  rooqi_read_note: ['documentID'],
  rooqi_request_write_access: [],
  rooqi_create_note: ['operationID', 'documentID', 'title', 'provider', 'model', 'promptVersion'],
  rooqi_append_text: [
    'operationID',
    'documentID',
    'text',
    'expectedVersion',
    'provider',
    'model',
    'promptVersion',
  ],
  rooqi_request_pdf_annotation_access: [],
  rooqi_list_pdf_targets: ['documentID'],
  rooqi_read_pdf_page: ['documentID', 'surfaceID', 'pageIndex', 'rect'],
  rooqi_annotate_pdf: [
    'operationID',
    'query',
    'expectedVersion',
    'sourceAssetID',
    'sourceDigest',
    'geometryDigest',
    'selectionTextDigest',
    'kind',
    'comment',
    'provider',
    'model',
    'promptVersion',
  ],
  rooqi_query_pdf_operation: ['documentID', 'operationID'],
};

describe('tool surface', () => {
  it('offers exactly the twelve RooQi tools', async () => {
    h = await notesHarness();
    expect(h.tk.kernel.tools('notes').map((t) => t.name)).toEqual(TOOLS);
  });

  it('publishes strict input schemas that require every listed field', async () => {
    h = await notesHarness();
    for (const t of h.tk.kernel.tools('notes')) {
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
      expect([...((t.inputSchema.required as string[] | undefined) ?? [])].sort(), t.name).toEqual(
        [...REQUIRED[t.name]!].sort(),
      );
    }
    const annotate = h.tk.kernel.tools('notes').find((t) => t.name === 'rooqi_annotate_pdf')!;
    const query = (annotate.inputSchema.properties as Record<string, Record<string, unknown>>)
      .query!;
    expect(query.additionalProperties).toBe(false);
    expect(query.required).toEqual(['documentID', 'surfaceID', 'pageIndex', 'rect']);
  });

  it('sets the reference limits: 16,384-byte requests, 8 calls in flight, 8 s per call', () => {
    expect(NOTES_LIMITS).toMatchObject({
      requestBytes: 16_384,
      concurrentCalls: 8,
      timeoutMs: 8_000,
    });
  });
});

describe('envelope', () => {
  it('answers ready as one text item with resultJSON as a JSON string and isError false', async () => {
    h = await notesHarness();
    const r = await h.call('rooqi_status', {});
    expect(r.content).toHaveLength(1);
    expect(r.content[0]!.type).toBe('text');
    expect(r.isError).toBe(false);
    const env = JSON.parse(textOf(r));
    expect(Object.keys(env).sort()).toEqual(['code', 'resultJSON']);
    expect(env.code).toBe('ready');
    expect(typeof env.resultJSON).toBe('string');
    expect(JSON.parse(env.resultJSON)).toEqual({
      server: { name: 'airlock-notes', version: '0.1.0', protocolVersion: 1 },
      grants: [],
    });
    expect(r.structuredContent).toEqual(env);
  });

  it('answers a failure with code and message only, and isError true', async () => {
    h = await notesHarness();
    const r = await h.call('rooqi_read_note', { documentID: uuid() });
    expect(r.isError).toBe(true);
    const env = JSON.parse(textOf(r));
    expect(Object.keys(env).sort()).toEqual(['code', 'message']);
    expect(env.code).toBe('notAuthorized');
    expect(env.message).toMatch(/request-access tool/);
  });
});

describe('strict schemas answer malformedRequest inside the envelope', () => {
  const append = () => ({
    operationID: uuid(),
    documentID: uuid(),
    text: 'hi',
    expectedVersion: 0,
    ...provenance,
  });
  const cases: Array<[string, string, unknown]> = [
    ['a missing field', 'rooqi_append_text', (({ text: _t, ...rest }) => rest)(append())],
    ['an extra field', 'rooqi_append_text', { ...append(), extra: 1 }],
    ['an extra field on an empty-input tool', 'rooqi_status', { verbose: true }],
    ['a wrong type', 'rooqi_append_text', { ...append(), expectedVersion: '0' }],
    ['a fractional version', 'rooqi_append_text', { ...append(), expectedVersion: 1.5 }],
    ['a negative version', 'rooqi_append_text', { ...append(), expectedVersion: -1 }],
    ['a bad UUID', 'rooqi_read_note', { documentID: 'not-a-uuid' }],
    ['empty text', 'rooqi_append_text', { ...append(), text: '' }],
    // 2,001 three-byte characters: 6,003 bytes though only 2,001 characters.
    ['text over 6,000 UTF-8 bytes', 'rooqi_append_text', { ...append(), text: '€'.repeat(2001) }],
    ['a provider over 64 bytes', 'rooqi_append_text', { ...append(), provider: 'é'.repeat(33) }],
    [
      'a title over 200 characters',
      'rooqi_create_note',
      { operationID: uuid(), documentID: uuid(), title: 'x'.repeat(201), ...provenance },
    ],
    [
      'an empty title',
      'rooqi_create_note',
      { operationID: uuid(), documentID: uuid(), title: '', ...provenance },
    ],
    [
      'a rect past the right edge',
      'rooqi_read_pdf_page',
      {
        documentID: uuid(),
        surfaceID: uuid(),
        pageIndex: 0,
        rect: { x: 600_000, y: 0, width: 400_001, height: 10 },
      },
    ],
    [
      'a zero-width rect',
      'rooqi_read_pdf_page',
      {
        documentID: uuid(),
        surfaceID: uuid(),
        pageIndex: 0,
        rect: { x: 0, y: 0, width: 0, height: 10 },
      },
    ],
    [
      'a page index over 999,999',
      'rooqi_read_pdf_page',
      {
        documentID: uuid(),
        surfaceID: uuid(),
        pageIndex: 1_000_000,
        rect: { x: 0, y: 0, width: 1, height: 1 },
      },
    ],
    [
      'an extra field inside rect',
      'rooqi_read_pdf_page',
      {
        documentID: uuid(),
        surfaceID: uuid(),
        pageIndex: 0,
        rect: { x: 0, y: 0, width: 1, height: 1, z: 1 },
      },
    ],
  ];
  for (const [what, tool, args] of cases) {
    it(`rejects ${what}`, async () => {
      h = await notesHarness();
      const r = await h.call(tool, args);
      expect(r.isError).toBe(true);
      const env = JSON.parse(textOf(r));
      expect(env.code).toBe('malformedRequest');
      expect(Object.keys(env).sort()).toEqual(['code', 'message']);
    });
  }

  it('accepts text of exactly 6,000 UTF-8 bytes in multi-byte characters', async () => {
    h = await notesHarness();
    const p = await h.project('P');
    const d = await h.document(p);
    await h.grant('write', p);
    const r = await h.env('rooqi_append_text', {
      ...append(),
      documentID: d,
      text: '€'.repeat(2000),
    });
    expect(r.code).toBe('ready');
  });

  it('rejects a comment annotation with an empty comment, and a digest in upper case', async () => {
    h = await notesHarness();
    const base = {
      operationID: uuid(),
      query: {
        documentID: uuid(),
        surfaceID: uuid(),
        pageIndex: 0,
        rect: { x: 0, y: 0, width: 10, height: 10 },
      },
      expectedVersion: 0,
      sourceAssetID: uuid(),
      sourceDigest: 'a'.repeat(64),
      geometryDigest: 'b'.repeat(64),
      selectionTextDigest: 'c'.repeat(64),
      kind: 'comment',
      comment: '',
      ...provenance,
    };
    expect((await h.env('rooqi_annotate_pdf', base)).code).toBe('malformedRequest');
    expect(
      (await h.env('rooqi_annotate_pdf', { ...base, comment: 'x', sourceDigest: 'A'.repeat(64) }))
        .code,
    ).toBe('malformedRequest');
    expect((await h.env('rooqi_annotate_pdf', { ...base, comment: 'x', provider: '' })).code).toBe(
      'malformedRequest',
    );
  });
});

describe('size limits', () => {
  it('answers a 16,385-byte request with requestTooLarge', async () => {
    h = await notesHarness();
    const args = { documentID: uuid(), pad: '' };
    args.pad = 'x'.repeat(16_385 - JSON.stringify(args).length);
    expect(Buffer.byteLength(JSON.stringify(args))).toBe(16_385);
    expect((await h.env('rooqi_read_note', args)).code).toBe('requestTooLarge');
  });

  it('answers resultTooLarge for a note whose text exceeds the envelope cap, never truncating', async () => {
    h = await notesHarness();
    const p = await h.project('P');
    const d = await h.document(p);
    await h.rest('POST', `notes/documents/${d}/blocks`, { text: 'y'.repeat(17_000) });
    await h.grant('read', p);
    const r = await h.call('rooqi_read_note', { documentID: d });
    const env = JSON.parse(textOf(r));
    expect(env.code).toBe('resultTooLarge');
    expect(env.resultJSON).toBeUndefined();
    expect(r.isError).toBe(true);
  });

  it('keeps every read within the token budget on a 5 MB note: read_note answers resultTooLarge saying what to do, the lists stay small', async () => {
    h = await notesHarness();
    const p = await h.project('P');
    const d = await h.document(p);
    // Five 1 MB blocks (the owner's REST route; an agent appends 6,000 bytes at a time).
    for (let i = 0; i < 5; i++)
      await h.rest('POST', `notes/documents/${d}/blocks`, { text: `${i}`.repeat(1_000_000) });
    await h.grant('read', p);
    for (const [tool, args] of [
      ['rooqi_read_note', { documentID: d }],
      ['rooqi_list_approved_documents', {}],
      ['rooqi_status', {}],
    ] as const) {
      const r = await h.call(tool, args);
      // Text and structuredContent together, characters / 4: far under 20k tokens.
      const chars = textOf(r).length + JSON.stringify(r.structuredContent ?? null).length;
      expect(chars / 4, tool).toBeLessThan(20_000);
    }
    const env = JSON.parse(textOf(await h.call('rooqi_read_note', { documentID: d })));
    expect(env.code).toBe('resultTooLarge');
    expect(env.message).toMatch(/at most \d+ can be returned/);
  });

  it('returns a note whose envelope is just under 16,384 bytes', async () => {
    h = await notesHarness();
    const p = await h.project('P');
    const d = await h.document(p);
    await h.grant('read', p);
    const probe = await h.call('rooqi_read_note', { documentID: d });
    const base = Buffer.byteLength(textOf(probe));
    // one block of plain letters adds exactly its length (revision goes 0 → 1)
    await h.rest('POST', `notes/documents/${d}/blocks`, { text: 'z'.repeat(16_384 - base) });
    const r = await h.call('rooqi_read_note', { documentID: d });
    expect(Buffer.byteLength(textOf(r))).toBe(16_384);
    expect(r.isError).toBe(false);
  });
});
