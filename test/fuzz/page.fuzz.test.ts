/**
 * Fuzzing the page door (issue #13 item 11): every `wu_*` tool with its
 * relay listening and no page connected, so calls that pass validation and
 * the owner's policy answer `unavailable`; and the bridge-token route over
 * real HTTP. Failures are `{code, message}` (spec/page.md "Tools"), `code`
 * being the WU code when the relay gave one, with the kernel's as `kind`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPageDoor } from '../../src/doors/page/door.js';
import { createPageTools } from '../../src/doors/page/tools.js';
import { loadConfig } from '../../src/doors/page/config.js';
import { connection } from '../../src/kernel/connection.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { CallOutcome } from '../../src/kernel/calls/pipeline.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import type { Presented, ToolResult } from '../../src/transport/surface.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
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

const config = Object.freeze({ ...loadConfig({ WU_MCP_TOKEN: 'v'.repeat(40) }), port: 0 });
const TOOLS = createPageTools({ config, relay: () => null }).map((t) => t.name);
const AGENT = connection('agent:fuzz', 'http-principal', undefined, 'fuzz');

let tk: TestKernel;
let app: HttpApp;
let tools: ToolFuzzTarget;
let rest: RestFuzzTarget;

function pageShape(shown: Presented, outcome: CallOutcome) {
  const body = textJson(shown);
  const result = shown as ToolResult;
  if (outcome.ok) {
    must(result.isError === undefined, 'a success is no tool error');
    return;
  }
  must(result.isError === true, 'a failure is a tool error');
  must(body.message === outcome.message, 'with its message');
  const relayCode = outcome.data?.code;
  if (typeof relayCode === 'string') {
    must(/^WU_[A-Z_]+$/.test(relayCode), () => `a relay code is a WU code, not ${relayCode}`);
    must(
      body.code === relayCode && body.kind === outcome.code,
      () => `{code: WU, kind}: ${brief(body)}`,
    );
  } else {
    must(
      body.code === outcome.code && body.kind === undefined,
      () => `{code, message}: ${brief(body)}`,
    );
  }
  if (outcome.code === 'internal') must(body.logId === outcome.data?.logId, 'with the log id');
}

beforeAll(async () => {
  tk = await testKernel([createPageDoor({ config })], { dir: fuzzDataDir() });
  const words = [
    'home',
    '/settings',
    '#app',
    '.btn',
    'submit',
    'count',
    'user.name',
    'wu:ready',
    'shell',
    'all',
    'GET',
  ];
  tools = {
    kernel: tk.kernel,
    mount: 'page',
    connections: [conn('fuzz:internal'), AGENT],
    words,
    shape: pageShape,
  };
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const { port } = await app.listen(0, '127.0.0.1');
  rest = {
    base: `http://127.0.0.1:${port}`,
    callers: [
      await ownerHeaders(tk.kernel),
      await agentHeaders(tk.kernel, 'fuzz'),
      {},
      { authorization: 'Bearer ok_forged' },
    ],
    words,
    maxBodyBytes: 4 * 1024 * 1024,
  };
}, 60_000);

afterAll(async () => {
  await app?.close();
  await tk?.dispose();
});

describe('page tools under garbage (relay listening, no page)', () => {
  for (const tool of TOOLS) {
    it(`${tool}: ${RUNS} inputs answer {code, message} (WU code with kind), each failure audited`, async () => {
      await fuzzTool(tools, tool);
      const status = await tk.kernel.call('page', 'wu_conexion', {}, { connection: conn() });
      expect(status.ok).toBe(true);
    }, 300_000);
  }
});

describe('page REST routes under garbage', () => {
  it(`every route: ${REST_RUNS} garbage requests each answer {status, code, message} and the server keeps serving`, async () => {
    const routes = tk.kernel.door('page')!.http!.routes!;
    expect(routes.map((r) => r.path)).toEqual(['page/bridge-token']);
    for (const route of routes) await fuzzRoute(rest, route);
  }, 300_000);
});
