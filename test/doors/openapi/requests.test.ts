/**
 * What reaches the API and what does not: next-page links and redirects
 * stay under the base URL's path with the credentials, pagination that
 * loops ends, and a header value HTTP cannot carry is refused before any
 * request. Against a loopback server that counts requests.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSpec } from '../../../src/doors/openapi/compile/compile.js';
import {
  countingServer,
  json,
  mountDoor,
  type CountingServer,
  type MountedDoor,
} from './helpers.js';

const KEY = 'sk-requests-0123456789';

const item = { type: 'object', properties: { id: { type: 'string' } } };
const linked = (summary: string) => ({
  get: {
    summary,
    parameters: [{ name: 'per_page', in: 'query', schema: { type: 'integer' } }],
    responses: {
      '200': {
        description: 'ok',
        headers: { Link: { schema: { type: 'string' } } },
        content: { 'application/json': { schema: { type: 'array', items: item } } },
      },
    },
  },
});
const plain = (summary: string) => ({
  get: { summary, responses: { '200': { description: 'ok' } } },
});

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Requests', version: '1' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  security: [{ key: [] }],
  paths: {
    '/escaping/': linked('The next page lies outside the base path'),
    '/self/': linked('The next page is this page'),
    '/cycle/': linked('The second page links back to the first'),
    '/moved/': plain('Redirects outside the base path'),
    '/relocated/': plain('Redirects inside the base path'),
    '/notes/': {
      get: {
        summary: 'Takes a header parameter',
        parameters: [{ name: 'X-Note', in: 'header', schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

function handler(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://x');
  const items = [{ id: url.searchParams.get('p') ?? '1' }];
  switch (url.pathname) {
    case '/api/v1/escaping/':
      return json(res, 200, items, { link: '</admin/escaping/?p=2>; rel="next"' });
    case '/api/v1/self/':
      return json(res, 200, items, { link: `<${req.url}>; rel="next"` });
    case '/api/v1/cycle/': {
      // The second page links back to the first.
      const first = `${url.pathname}?per_page=${url.searchParams.get('per_page')}`;
      const next = url.searchParams.has('p') ? first : `${first}&p=2`;
      return json(res, 200, items, { link: `<${next}>; rel="next"` });
    }
    case '/api/v1/moved/':
      res.writeHead(302, { location: '/elsewhere/' });
      return res.end();
    case '/api/v1/relocated/':
      res.writeHead(302, { location: '/api/v1/notes/' });
      return res.end();
    default:
      return json(res, 200, { path: url.pathname });
  }
}

let server: CountingServer;
let door: MountedDoor;
const seen = () => server.requests.map((q) => `${q.method} ${q.url}`);

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-openapi-requests-'));
  writeFileSync(join(dir, 'requests.json'), JSON.stringify(DOC));
  const catalog = await compileSpec(join(dir, 'requests.json'));
  server = await countingServer(handler);
  door = await mountDoor(catalog, {
    prefix: 'req',
    baseUrl: `${server.url}/api/v1`,
    env: { REQ_API_KEY: KEY },
  });
});
afterAll(async () => {
  await door.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

describe('next-page links and redirects', () => {
  it('a Link next outside the base URL path is not followed; the items so far come back with a warning', async () => {
    const r = await door.call('call', { resource: 'escaping', method: 'iterate', limit: 10 });
    expect(r.isError).toBe(false);
    expect(seen()).toEqual(['GET /api/v1/escaping/?per_page=10']);
    const out = JSON.parse(r.text) as Record<string, unknown>;
    expect(out).toMatchObject({ items: [{ id: '1' }], count: 1, truncated: true });
    expect(out.warning).toMatch(
      /a path outside \/api\/v1\/ \(\/admin\/escaping\/\)\. It is not followed/,
    );
  });

  it('a Link next pointing at the page itself, or at any page already fetched, ends the iteration', async () => {
    const self = await door.call('call', { resource: 'self', method: 'iterate', limit: 1000 });
    expect(seen()).toEqual(['GET /api/v1/self/?per_page=100']);
    expect(JSON.parse(self.text)).toMatchObject({
      count: 1,
      warning: expect.stringMatching(/already fetched/) as unknown,
    });
    server.requests.length = 0;
    const cycle = await door.call('call', { resource: 'cycle', method: 'iterate', limit: 1000 });
    expect(seen()).toEqual([
      'GET /api/v1/cycle/?per_page=100',
      'GET /api/v1/cycle/?per_page=100&p=2',
    ]);
    expect(JSON.parse(cycle.text)).toMatchObject({ items: [{ id: '1' }, { id: '2' }], count: 2 });
  });

  it('a same-origin redirect outside the base URL path is answered as an error, never followed with the credentials', async () => {
    const r = await door.call('call', { resource: 'moved', method: 'list' });
    expect(seen()).toEqual(['GET /api/v1/moved/']);
    expect(r.isError).toBe(true);
    const out = JSON.parse(r.text) as Record<string, unknown>;
    expect(out).toMatchObject({ code: 'upstreamError', status: 302 });
    expect(out.message).toMatch(
      /a path outside \/api\/v1\/ \(\/elsewhere\/\)\. It is not followed/,
    );
  });

  it('a redirect inside the base URL path is followed', async () => {
    const r = await door.call('call', { resource: 'relocated', method: 'list' });
    expect(seen()).toEqual(['GET /api/v1/relocated/', 'GET /api/v1/notes/']);
    expect(server.requests[1]!.headers['x-api-key']).toBe(KEY);
    expect(JSON.parse(r.text)).toEqual({ path: '/api/v1/notes/' });
  });
});

describe('header parameters', () => {
  it('a header parameter with CR/LF is malformedRequest naming the parameter, and nothing is sent', async () => {
    const r = await door.call('call', {
      resource: 'notes',
      method: 'list',
      args: { params: { 'X-Note': 'hello\r\nX-Injected: 1' } },
    });
    expect(r.isError).toBe(true);
    const out = JSON.parse(r.text) as Record<string, unknown>;
    expect(out).toMatchObject({ code: 'malformedRequest' });
    expect(out.message).toMatch(/params\.X-Note/);
    expect(server.requests).toHaveLength(0);
  });
});
