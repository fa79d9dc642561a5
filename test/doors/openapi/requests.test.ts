/**
 * What reaches the API and what does not: a header value HTTP cannot carry
 * is refused before any request. Against a loopback server that counts
 * requests.
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

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Requests', version: '1' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  security: [{ key: [] }],
  paths: {
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
  return json(res, 200, { path: url.pathname });
}

let server: CountingServer;
let door: MountedDoor;

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
