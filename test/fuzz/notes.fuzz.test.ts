/**
 * Fuzzing the notes door (issue #13 item 11): every `rooqi_*` tool as a
 * connection holding every grant, one holding none, and an agent under the
 * owner's policy; every REST route over real HTTP. Every outcome must be the
 * RooQi envelope `{code, message?, resultJSON?}` (spec/notes.md "Wire
 * format"), `isError` exactly when the code is not `ready`.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvelopeSchema, wireCodeOf } from '../../src/doors/notes/envelope.js';
import { createNotesDoor } from '../../src/doors/notes/index.js';
import { connection } from '../../src/kernel/connection.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { CallOutcome } from '../../src/kernel/calls/pipeline.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import type { Presented, ToolResult } from '../../src/transport/surface.js';
import { conn } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { notesHarness, provenance, uuid, type Harness } from '../doors/notes/harness.js';
import { samplePdf } from '../doors/notes/fixtures.js';
import {
  brief,
  fuzzDataDir,
  fuzzTool,
  must,
  RUNS,
  textJson,
  type ToolFuzzTarget,
} from './tool-fuzz.js';
import { fuzzRoute, REST_RUNS, type RestFuzzTarget } from './rest-fuzz.js';

const STRICT_ENVELOPE = EnvelopeSchema.strict();
const TOOLS = createNotesDoor().tools.map((t) => t.name);
const GRANTED = 'test:1';
const AGENT = connection('agent:fuzz', 'http-principal', undefined, 'fuzz');

let h: Harness;
let app: HttpApp;
let tools: ToolFuzzTarget;
let rest: RestFuzzTarget;

function notesShape(shown: Presented, outcome: CallOutcome) {
  const result = shown as ToolResult;
  must(result.content.length === 1, 'one content item');
  const parsed = STRICT_ENVELOPE.safeParse(textJson(shown));
  must(
    parsed.success,
    () => `the text is the envelope {code, message?, resultJSON?}: ${brief(result.content)}`,
  );
  const envelope = parsed.data;
  must(
    result.isError === (envelope.code !== 'ready'),
    'isError exactly when the code is not ready',
  );
  must(isDeepStrictEqual(result.structuredContent, envelope), 'structuredContent is the envelope');
  if (outcome.ok) {
    // A result over the envelope cap is refused whole, never truncated.
    must(
      envelope.code === 'ready' || envelope.code === 'resultTooLarge',
      () => `a success is ready, not ${envelope.code}`,
    );
    return;
  }
  must(
    envelope.code === wireCodeOf(outcome),
    () => `${outcome.code} travels as ${wireCodeOf(outcome)}`,
  );
  must(envelope.message === outcome.message, 'with its message');
  if (outcome.code === 'internal')
    must(String(envelope.message).includes(String(outcome.data?.logId)), 'naming the log id');
}

beforeAll(async () => {
  h = await notesHarness({ dir: fuzzDataDir() });
  const projectID = await h.project('Fuzz');
  const documentID = await h.document(projectID);
  const upload = await h.rest(
    'POST',
    `notes/documents/${documentID}/pdfs`,
    Buffer.from(await samplePdf()),
  );
  const surfaceID = String(upload.body.surfaceID);
  for (const c of ['read', 'write', 'pdfAnnotate'] as const) await h.grant(c, projectID, GRANTED);
  const words = [
    projectID,
    documentID,
    surfaceID,
    'a'.repeat(64),
    'highlight',
    'comment',
    ...Object.values(provenance),
  ];
  const rect = { x: 0, y: 0, width: 100_000, height: 100_000 };
  const query = { documentID, surfaceID, pageIndex: 0, rect };
  const examples: Record<string, unknown[]> = {
    rooqi_read_note: [{ documentID }],
    rooqi_create_note: [{ operationID: uuid(), documentID: uuid(), title: 't', ...provenance }],
    rooqi_append_text: [
      { operationID: uuid(), documentID, text: 'x', expectedVersion: 0, ...provenance },
      { operationID: uuid(), documentID, text: 'y', expectedVersion: 1, ...provenance },
    ],
    rooqi_list_pdf_targets: [{ documentID }],
    rooqi_read_pdf_page: [query],
    rooqi_annotate_pdf: [
      {
        operationID: uuid(),
        query,
        expectedVersion: 1,
        sourceAssetID: surfaceID,
        sourceDigest: 'a'.repeat(64),
        geometryDigest: 'b'.repeat(64),
        selectionTextDigest: 'c'.repeat(64),
        kind: 'highlight',
        comment: '',
        ...provenance,
      },
    ],
    rooqi_query_pdf_operation: [{ documentID, operationID: uuid() }],
  };
  tools = {
    kernel: h.tk.kernel,
    mount: 'notes',
    examples,
    connections: [conn(GRANTED), conn('fuzz:no-grants'), AGENT],
    words,
    shape: notesShape,
  };

  app = createHttpApp({ kernel: h.tk.kernel, logger: silentLogger });
  const { port } = await app.listen(0, '127.0.0.1');
  const argumentNames = h.tk.kernel
    .tools('notes')
    .flatMap((t) => Object.keys((t.inputSchema.properties as object | undefined) ?? {}));
  rest = {
    base: `http://127.0.0.1:${port}`,
    callers: [
      await ownerHeaders(h.tk.kernel),
      await agentHeaders(h.tk.kernel, 'fuzz'),
      {},
      { authorization: 'Bearer ok_forged' },
    ],
    words: [...words, ...argumentNames, 'name', 'title', 'text', 'signature', 'receipt'],
    maxBodyBytes: 4 * 1024 * 1024,
  };
}, 60_000);

afterAll(async () => {
  await app?.close();
  await h?.dispose();
});

describe('notes tools under garbage', () => {
  for (const tool of TOOLS) {
    it(`${tool}: ${RUNS} inputs answer the RooQi envelope, each failure audited`, async () => {
      await fuzzTool(tools, tool);
      expect(await h.env('rooqi_status', {})).toMatchObject({ code: 'ready' });
    }, 300_000);
  }
});

describe('notes REST routes under garbage', () => {
  it(`every route: ${REST_RUNS} garbage requests each answer {status, code, message} and the server keeps serving`, async () => {
    const routes = h.door.http!.routes!;
    expect(routes.length).toBeGreaterThan(5);
    for (const route of routes) await fuzzRoute(rest, route);
  }, 300_000);
});
