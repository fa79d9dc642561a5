/**
 * `<prefix>_call` against loopback servers the test controls: the order of
 * checks, iterate across pages, confirm for destructive methods, path values
 * that would leave the path, secrets from the environment, retries, cuts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { compileSpec } from '../../../src/doors/openapi/compile/compile.js';
import type { Catalog } from '../../../src/doors/openapi/catalog.js';
import type { Logger } from '../../../src/kernel/logger.js';
import {
  countingServer,
  json,
  mountDoor,
  type CountingServer,
  type MountedDoor,
} from './helpers.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ITEMS = Array.from({ length: 1000 }, (_, i) => ({ id: `i${i}`, name: `item ${i}` }));
const SECRET = 'sk-live-0123456789abcdef';

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Tracker', version: '1' },
  components: {
    securitySchemes: { api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    schemas: {
      Item: {
        type: 'object',
        required: ['name'],
        properties: {
          id: { type: 'string', readOnly: true },
          name: { type: 'string', minLength: 1 },
          size: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
  security: [{ api_key: [] }],
  paths: {
    '/api/v1/workspaces/{slug}/items/': {
      parameters: [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'List items',
        parameters: [
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          { name: 'order_by', in: 'query', schema: { type: 'string', enum: ['name', '-name'] } },
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
        summary: 'Create an item',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
        },
        responses: { '201': { description: 'created' } },
      },
    },
    '/api/v1/workspaces/{slug}/items/{item_id}/': {
      parameters: [
        { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'item_id', in: 'path', required: true, schema: { type: 'string' } },
      ],
      get: { summary: 'Get an item', responses: { '200': { description: 'ok' } } },
      delete: { summary: 'Delete an item', responses: { '204': { description: 'gone' } } },
    },
    '/api/v1/workspaces/{slug}/pages/': {
      parameters: [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'List pages (page numbers)',
        parameters: [
          { name: 'page', in: 'query', schema: { type: 'integer' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
              },
            },
          },
        },
      },
    },
    '/api/v1/workspaces/{slug}/links/': {
      parameters: [{ name: 'slug', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'List by Link header',
        parameters: [{ name: 'per_page', in: 'query', schema: { type: 'integer' } }],
        responses: {
          '200': {
            description: 'ok',
            headers: { Link: { schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } },
              },
            },
          },
        },
      },
    },
    '/api/v1/big/': {
      get: { summary: 'A large answer', responses: { '200': { description: 'ok' } } },
    },
    '/api/v1/flaky/': {
      get: { summary: 'Rate limited at first', responses: { '200': { description: 'ok' } } },
      post: { summary: 'Rate limited write', responses: { '200': { description: 'ok' } } },
    },
  },
};

function handler(req: IncomingMessage, res: ServerResponse, body: string) {
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname;
  const perPage = Number(url.searchParams.get('per_page') ?? '100');
  if (/^\/api\/v1\/workspaces\/[^/]+\/items\/$/.test(path) && req.method === 'GET') {
    const start = Number(url.searchParams.get('cursor') ?? '0');
    const page = ITEMS.slice(start, start + perPage);
    const next = start + perPage < ITEMS.length ? String(start + perPage) : null;
    return json(res, 200, { results: page, next_cursor: next });
  }
  if (/\/pages\/$/.test(path)) {
    const page = Number(url.searchParams.get('page') ?? '1');
    return json(res, 200, ITEMS.slice((page - 1) * perPage, page * perPage));
  }
  if (/\/links\/$/.test(path)) {
    const start = Number(url.searchParams.get('start') ?? '0');
    const next =
      start + perPage < 300
        ? `<${path}?start=${start + perPage}&per_page=${perPage}>; rel="next"`
        : '';
    return json(
      res,
      200,
      ITEMS.slice(start, Math.min(300, start + perPage)),
      next ? { link: next } : {},
    );
  }
  if (path === '/api/v1/big/') return json(res, 200, { blob: 'x'.repeat(100_000) });
  if (path === '/api/v1/flaky/') {
    flaky++;
    if (flaky % 3 !== 0) return json(res, 429, { error: 'slow down' }, { 'retry-after': '0' });
    return json(res, 200, { ok: true, attempt: flaky });
  }
  if (req.method === 'POST')
    return json(res, 201, {
      id: 'new',
      echo: JSON.parse(body || '{}'),
      seenKey: req.headers['x-api-key'],
    });
  if (req.method === 'DELETE') {
    res.writeHead(204);
    return res.end();
  }
  if (path.endsWith('/missing/')) return json(res, 404, { detail: 'Not found.' });
  return json(res, 200, { path, seenKey: req.headers['x-api-key'] });
}
let flaky = 0;

/** A logger that keeps every line, to check no secret is ever logged. */
function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (a: unknown, b?: unknown) =>
    void lines.push(JSON.stringify({ level, a, b }));
  const logger: Logger = {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}

let catalog: Catalog;
let server: CountingServer;
let door: MountedDoor;
const logLines: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-openapi-calling-'));
  writeFileSync(join(dir, 'tracker.json'), JSON.stringify(DOC));
  catalog = await compileSpec(join(dir, 'tracker.json'));
  server = await countingServer(handler);
  door = await mountDoor(catalog, {
    prefix: 'plane',
    baseUrl: server.url,
    env: { PLANE_API_KEY: SECRET },
    defaults: { slug: 'acme' },
    logger: recordingLogger(logLines),
  });
});
afterAll(async () => {
  await door.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

describe('iterate', () => {
  it('with limit 250 collects exactly 250 items across pages and reports truncated: true', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'iterate',
      args: { params: { per_page: 100 } },
      limit: 250,
    });
    expect(r.isError).toBe(false);
    const out = JSON.parse(r.text) as {
      items: { id: string }[];
      count: number;
      truncated: boolean;
    };
    expect(out.count).toBe(250);
    expect(out.items).toHaveLength(250);
    expect(out.items[249]!.id).toBe('i249');
    expect(out.truncated).toBe(true);
    expect(server.requests).toHaveLength(3);
  });

  it('defaults to 100 items and stops at the last page with truncated: false', async () => {
    const first = JSON.parse(
      (await door.call('call', { resource: 'workspaces.items', method: 'iterate' })).text,
    ) as { count: number; truncated: boolean };
    expect(first).toMatchObject({ count: 100, truncated: true });
    const all = JSON.parse(
      (await door.call('call', { resource: 'workspaces.items', method: 'iterate', limit: 1000 }))
        .text,
    ) as { count: number; truncated: boolean };
    expect(all).toMatchObject({ count: 1000, truncated: false });
  });

  it('follows page numbers and Link headers', async () => {
    const pages = JSON.parse(
      (
        await door.call('call', {
          resource: 'workspaces.pages',
          method: 'iterate',
          args: { params: { per_page: 40 } },
          limit: 100,
        })
      ).text,
    ) as { count: number; truncated: boolean };
    expect(pages).toMatchObject({ count: 100, truncated: true });
    const links = JSON.parse(
      (
        await door.call('call', {
          resource: 'workspaces.links',
          method: 'iterate',
          args: { params: { per_page: 70 } },
          limit: 1000,
        })
      ).text,
    ) as { count: number; truncated: boolean };
    expect(links).toMatchObject({ count: 300, truncated: false });
  });

  it('limit above 1,000 is refused', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'iterate',
      limit: 1001,
    });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/malformedRequest/);
  });
});

describe('safety', () => {
  it('a DELETE without confirm is refused without any request reaching the server', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'delete',
      args: { item: 'i1' },
    });
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.text)).toMatchObject({ code: 'confirmRequired' });
    expect(r.text).toMatch(/confirm: true/);
    expect(server.requests).toHaveLength(0);
    const ok = await door.call('call', {
      resource: 'workspaces.items',
      method: 'delete',
      args: { item: 'i1' },
      confirm: true,
    });
    expect(ok.isError).toBe(false);
    expect(server.requests.map((q) => `${q.method} ${q.url}`)).toEqual([
      'DELETE /api/v1/workspaces/acme/items/i1/',
    ]);
  });

  it('reaching another host through a path parameter is refused, nothing is sent', async () => {
    for (const item of [
      'http://evil.example/x',
      '//evil.example',
      '../../../admin',
      '..',
      'a/b',
      'a%2Fb',
      'a\\b',
    ]) {
      const r = await door.call('call', {
        resource: 'workspaces.items',
        method: 'retrieve',
        args: { item },
      });
      expect(r.isError, item).toBe(true);
      expect(r.text).toMatch(/would change the request path/);
    }
    expect(server.requests).toHaveLength(0);
  });

  it('a path id or query value with an unpaired surrogate is refused as malformedRequest naming it, nothing is sent', async () => {
    const byPath = await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { item: 'x\uDFFFy' },
    });
    expect(byPath.isError).toBe(true);
    expect(JSON.parse(byPath.text)).toEqual({
      code: 'malformedRequest',
      message:
        'item_id is refused: it contains an unpaired UTF-16 surrogate, which has no UTF-8 form to send; send well-formed text.',
      pointer: '/item_id',
    });
    const byQuery = await door.call('call', {
      resource: 'workspaces.items',
      method: 'list',
      args: { params: { cursor: '\uD800' } },
    });
    expect(JSON.parse(byQuery.text)).toMatchObject({
      code: 'malformedRequest',
      pointer: '/params/cursor',
    });
    expect(server.requests).toHaveLength(0);
  });

  it('path values are percent-encoded', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { item: 'a b?c#d' },
    });
    expect(r.isError).toBe(false);
    expect(server.requests[0]!.url).toBe('/api/v1/workspaces/acme/items/a%20b%3Fc%23d/');
  });

  it('the API key from the environment reaches the server and appears in no tool result, log line or audit entry', async () => {
    const created = await door.call('call', {
      resource: 'workspaces.items',
      method: 'create',
      args: { data: { name: 'n' } },
    });
    const read = await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { item: 'i2' },
    });
    expect(server.requests.map((q) => q.headers['x-api-key'])).toEqual([SECRET, SECRET]);
    // The server echoes the key back; the door scrubs it.
    expect(created.text).toContain('[REDACTED]');
    for (const r of [created, read]) expect(r.text).not.toContain(SECRET);
    const described = await door.call('describe', {
      resource: 'workspaces.items',
      method: 'create',
    });
    expect(described.text + JSON.stringify(described.structured)).not.toContain(SECRET);
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line).not.toContain(SECRET);
    const audit = await door.tk.kernel.audit.exportJsonLines();
    expect(audit).toContain('plane_call');
    expect(audit).not.toContain(SECRET);
  });

  it('--header values read ${VAR} from the environment; the value is sent and scrubbed like any secret', async () => {
    const other = await mountDoor(catalog, {
      prefix: 'hdr',
      baseUrl: server.url,
      env: { TRACE_TOKEN: 'trace-secret-777' },
      headers: { 'X-Trace-Token': '${TRACE_TOKEN}' },
      defaults: { slug: 'acme' },
    });
    try {
      const r = await other.call('call', {
        resource: 'workspaces.items',
        method: 'create',
        args: { data: { name: 'trace-secret-777' } },
      });
      expect(server.requests[0]!.headers['x-trace-token']).toBe('trace-secret-777');
      expect(r.text).not.toContain('trace-secret-777');
    } finally {
      await other.close();
    }
  });

  it('idempotent methods retry on 429 honouring Retry-After; writes are not retried', async () => {
    flaky = 0;
    const r = await door.call('call', { resource: 'flaky', method: 'list' });
    expect(r.isError).toBe(false);
    expect(server.requests).toHaveLength(3);
    server.requests.length = 0;
    flaky = 0;
    const w = await door.call('call', { resource: 'flaky', method: 'create' });
    expect(w.isError).toBe(true);
    expect(JSON.parse(w.text)).toMatchObject({ code: 'upstreamError', status: 429 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('order of checks and results', () => {
  it('unknown resource or method: a did-you-mean list', async () => {
    const r = await door.call('call', { resource: 'workspaces.itemz', method: 'list' });
    const parsed = JSON.parse(r.text) as { code: string; didYouMean: string[] };
    expect(parsed.code).toBe('notFound');
    expect(parsed.didYouMean[0]).toBe('workspaces.items');
    const m = await door.call('describe', { resource: 'workspaces.items', method: 'lst' });
    expect(JSON.parse(m.text)).toMatchObject({ code: 'notFound', didYouMean: ['list'] });
  });

  it('destructive is checked before unknown arguments', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'delete',
      args: { bogus: 1 },
    });
    expect(JSON.parse(r.text)).toMatchObject({ code: 'confirmRequired' });
  });

  it('unknown argument names, then missing required, then schema violations with JSON pointers', async () => {
    const unknown = JSON.parse(
      (
        await door.call('call', {
          resource: 'workspaces.items',
          method: 'create',
          args: { bogus: 1 },
        })
      ).text,
    );
    expect(unknown).toMatchObject({ code: 'malformedRequest', unknown: ['bogus'] });
    const missing = JSON.parse(
      (await door.call('call', { resource: 'workspaces.items', method: 'create', args: {} })).text,
    );
    expect(missing).toMatchObject({ code: 'malformedRequest', missing: ['data'] });
    const invalid = JSON.parse(
      (
        await door.call('call', {
          resource: 'workspaces.items',
          method: 'create',
          args: { data: { name: '', size: 0 } },
        })
      ).text,
    );
    expect(invalid.code).toBe('malformedRequest');
    expect(invalid.violations.map((v: { pointer: string }) => v.pointer).sort()).toEqual([
      '/data/name',
      '/data/size',
    ]);
    const query = JSON.parse(
      (
        await door.call('call', {
          resource: 'workspaces.items',
          method: 'list',
          args: { params: { order_by: 'size' } },
        })
      ).text,
    );
    expect(query.violations).toEqual([
      { pointer: '/params/order_by', message: 'must be one of "name", "-name"' },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('slug defaults to the configured workspace; the spec name of a path id is accepted too', async () => {
    await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { item_id: 'i3' },
    });
    await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { slug: 'other', item: 'i4' },
    });
    expect(server.requests.map((q) => q.url)).toEqual([
      '/api/v1/workspaces/acme/items/i3/',
      '/api/v1/workspaces/other/items/i4/',
    ]);
  });

  it('query values given as strings are coerced to the declared types', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'list',
      args: { params: { per_page: '5' } },
    });
    expect(r.isError).toBe(false);
    expect((JSON.parse(r.text) as { results: unknown[] }).results).toHaveLength(5);
  });

  it('a result over 60,000 characters is cut there with a note giving the full length', async () => {
    const r = await door.call('call', { resource: 'big', method: 'list' });
    expect(r.isError).toBe(false);
    expect(r.text.length).toBeLessThan(60_400);
    expect(r.text).toMatch(/\[Cut at 60,000 of 100,\d{3} characters\. Narrow the request/);
  });

  it('HTTP errors come back as isError with the status and the API error body', async () => {
    const r = await door.call('call', {
      resource: 'workspaces.items',
      method: 'retrieve',
      args: { item: 'missing' },
    });
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.text)).toMatchObject({
      code: 'upstreamError',
      status: 404,
      body: { detail: 'Not found.' },
    });
  });
});

describe('resources and describe', () => {
  it('_resources without a query lists every resource with its method names', async () => {
    const r = await door.call('resources', {});
    expect(r.text).toContain('workspaces.items: list, iterate, create, retrieve, delete');
    expect((r.structured!.resources as unknown[]).length).toBe(catalog.resources.length);
  });

  it('_resources with a query shows the matching resources with signatures; no match suggests a shorter query', async () => {
    const r = await door.call('resources', { query: 'items create' });
    expect(r.text).toContain('create(slug, data) [write] — Create an item');
    expect(r.text).toContain('iterate(slug, params?, limit?) [read] — List items');
    const none = await door.call('resources', { query: 'webhooks of cycles' });
    expect(none.text).toMatch(/No resource matches .*shorter query/);
  });

  it('_describe shows call order, path ids, allowed values, pagination, confirm, and a complete example', async () => {
    const list = await door.call('describe', { resource: 'workspaces.items', method: 'list' });
    expect(list.text).toContain('workspaces.items.list(slug, params?)  [read]');
    expect(list.text).toContain('slug: string — path id; default: acme');
    expect(list.text).toContain('allowed: name, -name');
    expect(list.text).toMatch(/Pagination: cursor/);
    const del = await door.call('describe', { resource: 'workspaces.items', method: 'delete' });
    expect(del.text).toContain('destructive: needs confirm');
    expect(del.structured!.example).toEqual({
      resource: 'workspaces.items',
      method: 'delete',
      args: { slug: 'acme', item: 'example' },
      confirm: true,
    });
  });

  it('_describe works while the API is unreachable', async () => {
    const offline = await mountDoor(catalog, { baseUrl: 'http://127.0.0.1:9', prefix: 'offline' });
    try {
      expect(
        (await offline.call('describe', { resource: 'workspaces.items', method: 'create' }))
          .isError,
      ).toBe(false);
      const call = await offline.call('call', {
        resource: 'workspaces.items',
        method: 'retrieve',
        args: { slug: 's', item: 'x' },
      });
      expect(JSON.parse(call.text)).toMatchObject({ code: 'unavailable' });
    } finally {
      await offline.close();
    }
  });

  it('version probe answering 404: _resources and _call refuse naming the typed tools, _describe keeps working', async () => {
    const probed = await mountDoor(catalog, {
      baseUrl: server.url,
      prefix: 'probed',
      probe: { path: '/missing/', typedTools: ['probed_list_items'] },
    });
    try {
      const r = await probed.call('resources', {});
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/probed_list_items/);
      expect((await probed.call('call', { resource: 'big', method: 'list' })).isError).toBe(true);
      expect((await probed.call('describe', { resource: 'big', method: 'list' })).isError).toBe(
        false,
      );
    } finally {
      await probed.close();
    }
  });
});
