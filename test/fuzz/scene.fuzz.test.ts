/**
 * Fuzzing the scene door (issue #13 item 11): every `koharu.*` tool, half of
 * its inputs with a project open and half with none, and every REST route
 * over real HTTP. Failures are tool errors `{code, message, …}`, or JSON-RPC
 * −32600 for `noProject` (spec/scene.md "MCP tools").
 */
import { rmSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connection } from '../../src/kernel/connection.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { CallOutcome } from '../../src/kernel/calls/pipeline.js';
import { toolNames } from '../../src/doors/scene/tools/tools.js';
import { INVALID_REQUEST } from '../../src/doors/scene/tools/presenter.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import type { Presented, ProtocolErrorOutcome, ToolResult } from '../../src/transport/surface.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { imageNodeOf, pageOf, sceneDoor, textNodeOf } from '../doors/scene/helpers.js';
import type { Page } from '../../src/doors/scene/model/model.js';
import { fakeLlm, type FakeLlm } from '../doors/scene/server.js';
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

const NAMES = toolNames('koharu');
const INTERNAL = conn('fuzz:internal');
const AGENT = connection('agent:fuzz', 'http-principal', undefined, 'fuzz');

let tk: TestKernel;
/** The page every run starts from (its ids are among the words), with an image and a text node. */
let fixture: Page;
let llm: FakeLlm;
let app: HttpApp;
let tools: ToolFuzzTarget;
let rest: RestFuzzTarget;

const call = (tool: string, args: unknown) =>
  tk.kernel.call('scene', tool, args, { connection: INTERNAL });

/** Opens the fuzz project again, or a fresh one there when a DELETE /projects/fuzz took it away. */
async function ensureOpen() {
  let r = await call(NAMES.openProject, { path: 'fuzz' });
  if (!r.ok && r.code === 'notFound')
    r = await call(NAMES.openProject, { path: 'fuzz', createName: 'Fuzz' });
  if (!r.ok) throw new Error(`cannot reopen the fuzz project: ${r.message}`);
  // Put the fixture page back as it was, so pipelines and ops have something to work on.
  const shown = await call(NAMES.getScene, { pages: [fixture.id] });
  const op = shown.ok
    ? {
        batch: {
          ops: [{ removePage: { id: fixture.id } }, { addPage: { page: fixture, at: 0 } }],
          label: 'restore',
        },
      }
    : { addPage: { page: fixture, at: 0 } };
  const restored = await call(NAMES.apply, { op });
  if (!restored.ok) throw new Error(`cannot restore the fixture page: ${restored.message}`);
}

async function ensureClosed() {
  await call(NAMES.closeProject, {});
}

function sceneShape(shown: Presented, outcome: CallOutcome) {
  if (!outcome.ok && outcome.code === 'noProject') {
    const error = (shown as ProtocolErrorOutcome).protocolError;
    must(
      error?.code === INVALID_REQUEST,
      () => `noProject is JSON-RPC ${INVALID_REQUEST}, not ${brief(shown)}`,
    );
    must(typeof error.message === 'string' && error.message.length > 0, 'with a message');
    return;
  }
  const body = textJson(shown);
  const result = shown as ToolResult;
  if (outcome.ok) {
    must(result.isError === undefined, 'a success is no tool error');
    must(isDeepStrictEqual(result.structuredContent, body), 'structuredContent is the text');
    return;
  }
  must(result.isError === true, 'a failure is a tool error');
  must(
    body.code === outcome.code && body.message === outcome.message,
    () => `the text is {code, message}: ${brief(body)}`,
  );
  if (outcome.code === 'internal') must(body.logId === outcome.data?.logId, 'with the log id');
}

beforeAll(async () => {
  const data = fuzzDataDir();
  llm = await fakeLlm();
  const door = await sceneDoor(data, { llm: { baseUrl: llm.url, model: 'fake' } });
  tk = await testKernel([door], { dir: data });
  const text = textNodeOf('hello');
  const image = imageNodeOf('source');
  const page = pageOf([text, image]);
  fixture = page;
  await ensureOpen();
  const job = await call(NAMES.startPipeline, { steps: ['fill'] });
  const jobId = job.ok ? (job.value as { jobId: string }).jobId : 'none';
  const words = [
    page.id,
    text.id,
    image.id,
    jobId,
    'fill',
    'renderer',
    'llm',
    'fuzz',
    'Fuzz',
    'elsewhere',
  ];
  const at = { page: page.id, id: text.id };
  // Engines that need no model download: tesseract would start an OCR worker per call.
  const examples: Record<string, unknown[]> = {
    [NAMES.apply]: [
      { op: { addPage: { page: pageOf() } } },
      { op: { addNode: { page: page.id, node: textNodeOf('more') } } },
      { op: { updateNode: { ...at, patch: { transform: { x: 5 }, visible: false } } } },
      { op: { updateNode: { ...at, patch: { data: { text: { text: 'edited' } } } } } },
      { op: { updatePage: { id: page.id, patch: { name: 'renamed' } } } },
      { op: { reorderNodes: { page: page.id, order: [image.id, text.id] } } },
      { op: { removeNode: at } },
      {
        op: {
          batch: {
            ops: [{ removeNode: at }, { addNode: { page: page.id, node: text } }],
            label: 'swap',
          },
        },
      },
      { op: { updateProjectMeta: { patch: { name: 'Fuzzed' } } } },
    ],
    [NAMES.openProject]: [{ path: 'fuzz' }, { path: 'fresh', createName: 'Fresh' }],
    [NAMES.startPipeline]: [
      { steps: ['fill'] },
      { steps: ['renderer'], pages: [page.id], defaultFont: 'DejaVu Sans' },
      { steps: ['llm', 'renderer'], targetLanguage: 'pt', textNodeIds: [text.id] },
    ],
    [NAMES.getScene]: [{ pages: [page.id] }],
    [NAMES.getJob]: [{ jobId }],
    [NAMES.cancelJob]: [{ jobId }],
    [NAMES.export]: [
      { format: 'khr' },
      { format: 'pdf' },
      { format: 'rendered', pages: [page.id] },
    ],
  };
  tools = {
    kernel: tk.kernel,
    mount: 'scene',
    connections: [INTERNAL, AGENT],
    words,
    examples,
    shape: sceneShape,
  };

  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const { port } = await app.listen(0, '127.0.0.1');
  const argumentNames = tk.kernel
    .tools('scene')
    .flatMap((t) => Object.keys((t.inputSchema.properties as object | undefined) ?? {}));
  rest = {
    base: `http://127.0.0.1:${port}`,
    callers: [
      await ownerHeaders(tk.kernel),
      await agentHeaders(tk.kernel, 'fuzz'),
      {},
      { authorization: 'Bearer at_forged' },
    ],
    words: [...words, ...argumentNames, 'addPage', 'op', 'name', 'id', 'format', 'steps'],
    maxBodyBytes: 4 * 1024 * 1024,
  };
}, 60_000);

afterAll(async () => {
  await app?.close();
  await tk?.close();
  await llm?.close();
  if (tk) rmSync(tk.dir, { recursive: true, force: true });
});

describe('scene tools under garbage', () => {
  for (const tool of Object.values(NAMES)) {
    it(`${tool}: ${RUNS} inputs (half with a project open) answer {code, message} tool errors or −32600 for noProject, each failure audited`, async () => {
      await ensureOpen();
      const half = Math.ceil(RUNS / 2);
      await fuzzTool(tools, tool, half, `${tool} open`);
      await ensureClosed();
      await fuzzTool(tools, tool, RUNS - half, `${tool} closed`);
      const engines = await call(NAMES.listEngines, {});
      expect(engines.ok).toBe(true);
      await ensureOpen();
      expect((await call(NAMES.getScene, {})).ok).toBe(true);
    }, 300_000);
  }
});

describe('scene REST routes under garbage', () => {
  it(`every route: ${REST_RUNS} garbage requests each answer {status, code, message} and the server keeps serving`, async () => {
    const routes = tk.kernel.door('scene')!.http!.routes!;
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      await ensureOpen();
      await fuzzRoute(rest, route);
    }
  }, 300_000);
});
