/**
 * Fuzzing the openapi door (issue #13 item 11): its three tools over a small
 * generated spec (path, query, header and body parameters, an enum, bounds,
 * a destructive method) whose upstream is a loopback server that records
 * every request. Failures are `{code, message, …}` as JSON text (spec/
 * openapi.md "Results"). The door has no REST routes of its own.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileSpec } from '../../src/doors/openapi/compile/compile.js';
import { createOpenapiDoor } from '../../src/doors/openapi/door.js';
import { connection } from '../../src/kernel/connection.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { CallOutcome } from '../../src/kernel/calls/pipeline.js';
import type { Presented, ToolResult } from '../../src/transport/surface.js';
import { conn, testKernel, type TestKernel } from '../helpers/kernel.js';
import { countingServer, json, type CountingServer } from '../doors/openapi/helpers.js';
import {
  brief,
  fuzzDataDir,
  fuzzTool,
  must,
  RUNS,
  textJson,
  type ToolFuzzTarget,
} from './tool-fuzz.js';

const PREFIX = 'fz';
const TOOLS = ['resources', 'describe', 'call'].map((t) => `${PREFIX}_${t}`);
const AGENT = connection('agent:fuzz', 'http-principal', undefined, 'fuzz');
const SECRET = 'sk-fuzz-0123456789abcdef';

/** A small API with one of each kind of parameter the door checks. */
const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Fuzz tracker', version: '1' },
  components: {
    securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    schemas: {
      Item: {
        type: 'object',
        required: ['name'],
        properties: {
          id: { type: 'string', readOnly: true },
          name: { type: 'string', minLength: 1, maxLength: 50 },
          size: { type: 'integer', minimum: 1, maximum: 100 },
          tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
          meta: { type: 'object', additionalProperties: { type: 'string' } },
        },
      },
    },
  },
  security: [{ key: [] }],
  paths: {
    '/workspaces/{slug}/items/': {
      parameters: [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        operationId: 'listItems',
        summary: 'List items',
        parameters: [
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'order_by', in: 'query', schema: { type: 'string', enum: ['name', '-name'] } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: {
                    results: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
                    next_cursor: { type: 'string', nullable: true },
                  },
                },
              },
            },
          },
        },
      },
      post: {
        operationId: 'createItem',
        summary: 'Create an item',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/workspaces/{slug}/items/{item_id}/': {
      parameters: [
        { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'item_id', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: {
        operationId: 'getItem',
        summary: 'Get an item',
        responses: { '200': { description: 'ok' } },
      },
      patch: {
        operationId: 'updateItem',
        summary: 'Update an item',
        requestBody: {
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
        },
        responses: { '200': { description: 'ok' } },
      },
      delete: {
        operationId: 'deleteItem',
        summary: 'Delete an item',
        responses: { '204': { description: 'gone' } },
      },
    },
  },
};

let tk: TestKernel;
let upstream: CountingServer;
let specDir: string;
let tools: ToolFuzzTarget;

function openapiShape(shown: Presented, outcome: CallOutcome) {
  const result = shown as ToolResult;
  must(result.content.length === 1, 'one content item');
  const text = String(result.content[0]?.text);
  must(
    !text.includes(SECRET) && !JSON.stringify(result.structuredContent ?? null).includes(SECRET),
    'no secret is shown',
  );
  if (outcome.ok) {
    must(result.isError === undefined && text.length > 0, 'a success is text, no tool error');
    return;
  }
  must(result.isError === true, 'a failure is a tool error');
  const body = textJson(shown);
  must(
    body.code === outcome.code && typeof body.message === 'string',
    () => `the text is {code, message}: ${brief(body)}`,
  );
  if (outcome.code === 'internal') must(body.logId === outcome.data?.logId, 'with the log id');
}

beforeAll(async () => {
  specDir = mkdtempSync(join(tmpdir(), 'airlock-fuzz-openapi-'));
  writeFileSync(join(specDir, 'spec.json'), JSON.stringify(SPEC));
  const catalog = await compileSpec(join(specDir, 'spec.json'));
  // Echoes what it got; never 429 or 5xx, whose retries would only make the run slower.
  upstream = await countingServer((req, res, body) => {
    upstream.requests.length = 0; // thousands of calls: keep no history, nothing reads it
    if (req.method === 'DELETE') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (req.url?.includes('missing')) return json(res, 404, { detail: 'Not found.' });
    return json(res, 200, {
      url: req.url,
      method: req.method,
      body: body.slice(0, 200),
      results: [],
    });
  });
  const door = createOpenapiDoor({
    catalog,
    prefix: PREFIX,
    baseUrl: upstream.url,
    env: { FZ_API_KEY: SECRET },
    logger: silentLogger,
  });
  tk = await testKernel([door], { dir: fuzzDataDir() });
  const listed = await tk.kernel.call('fz', `${PREFIX}_resources`, {}, { connection: conn() });
  if (!listed.ok) throw new Error(listed.message);
  const { resources } = (
    listed.value as { structured: { resources: { path: string; methods: string[] }[] } }
  ).structured;
  const words = [
    ...resources.flatMap((r) => [r.path, ...r.methods]),
    'slug',
    'item_id',
    'cursor',
    'per_page',
    'order_by',
    'X-Trace',
    'name',
    'size',
    'tags',
    'meta',
    'params',
    'data',
    'iterate',
    'acme',
    'missing',
  ];
  // Every method's own example call, as its describe text gives it.
  const pairs = resources.flatMap((r) => r.methods.map((method) => ({ resource: r.path, method })));
  const examples: Record<string, unknown[]> = {
    [`${PREFIX}_describe`]: pairs,
    [`${PREFIX}_call`]: [],
  };
  for (const pair of pairs) {
    const described = await tk.kernel.call('fz', `${PREFIX}_describe`, pair, {
      connection: conn(),
    });
    if (!described.ok) throw new Error(described.message);
    const text = (described.value as { text: string }).text;
    examples[`${PREFIX}_call`]!.push(
      JSON.parse(text.slice(text.indexOf('{', text.indexOf('Example ')))),
    );
  }
  tools = {
    kernel: tk.kernel,
    mount: 'fz',
    connections: [conn('fuzz:internal'), AGENT],
    words,
    examples,
    shape: openapiShape,
  };
}, 60_000);

afterAll(async () => {
  await tk?.dispose();
  await upstream?.close();
  if (specDir) rmSync(specDir, { recursive: true, force: true });
});

describe('openapi tools under garbage', () => {
  for (const tool of TOOLS) {
    it(`${tool}: ${RUNS} inputs answer {code, message} JSON text, each failure audited, no secret shown`, async () => {
      await fuzzTool(tools, tool);
      const again = await tk.kernel.call('fz', `${PREFIX}_resources`, {}, { connection: conn() });
      expect(again.ok).toBe(true);
    }, 300_000);
  }
});
