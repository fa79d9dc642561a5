/**
 * An openapi ask shows what will happen against the current state (issue
 * 27 items 1 and 2): the card of a DELETE holds the resource as the
 * document's GET on the same path answers it now, and an approved DELETE
 * whose resource changed before the retry is asked again, sending nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { compileSpec } from '../../src/doors/openapi/compile/compile.js';
import { createOpenapiDoor } from '../../src/doors/openapi/door.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { agentHeaders } from '../helpers/principals.js';
import { countingServer, json, type CountingServer } from '../doors/openapi/helpers.js';

const SECRET = 'sk-live-current-0123456789';
const item = (withGet: boolean) => ({
  parameters: [{ name: 'item_id', in: 'path', required: true, schema: { type: 'string' } }],
  ...(withGet
    ? { get: { summary: 'Get an item', responses: { '200': { description: 'ok' } } } }
    : {}),
  delete: { summary: 'Delete an item', responses: { '204': { description: 'gone' } } },
});
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Tracker', version: '1' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  security: [{ key: [] }],
  paths: { '/items/{item_id}/': item(true), '/notes/{item_id}/': item(false) },
};

const items = new Map<string, Record<string, unknown>>();
let server: CountingServer;
let tk: TestKernel;
let app: HttpApp;
let agent: Client;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-current-'));
  writeFileSync(join(dir, 'tracker.json'), JSON.stringify(DOC));
  const catalog = await compileSpec(join(dir, 'tracker.json'));
  server = await countingServer((req, res) => {
    const id = /\/(items|notes)\/([^/]+)\//.exec(req.url ?? '')?.[2] ?? '';
    if (req.method === 'DELETE') {
      items.delete(id);
      res.writeHead(204).end();
    } else if (items.has(id)) json(res, 200, items.get(id));
    else json(res, 404, { error: 'no such item' });
  });
  tk = await testKernel([
    createOpenapiDoor({
      catalog,
      prefix: 'plane',
      baseUrl: server.url,
      env: { PLANE_API_KEY: SECRET },
      logger: silentLogger,
    }),
  ]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  const token = (await agentHeaders(tk.kernel, 'alice')).authorization!.slice('Bearer '.length);
  agent = await connectClient(`${base}/mcp`, { token });
});
afterAll(async () => {
  await agent?.close();
  await app?.close();
  await tk?.dispose();
  await server?.close();
});

const del = (resource: string, id: string) =>
  agent
    .callTool({
      name: 'plane_call',
      arguments: { resource, method: 'delete', args: { item_id: id }, confirm: true },
    })
    .then(toolJson);
const card = async (id: unknown) =>
  (await tk.kernel.consent.pending()).find((a) => a.id === id)!.preview as Record<string, unknown>;
const deletes = () => server.requests.filter((r) => r.method === 'DELETE').length;

describe('openapi asks against the current resource', () => {
  it("a DELETE's card shows the resource as the matching GET answers it now, secrets out", async () => {
    items.set('7', { id: '7', title: 'Write the report', apiKey: SECRET });
    const asked = await del('items', '7');
    expect(asked.code).toBe('approvalRequired');
    const preview = await card(asked.approvalID);
    expect(preview.currentFrom).toBe('GET /items/{item_id}/');
    expect(preview.current).toEqual({ id: '7', title: 'Write the report', apiKey: '[REDACTED]' });
    expect(JSON.stringify(preview)).not.toContain(SECRET);
    expect(deletes()).toBe(0);
  });

  it('an approved DELETE whose resource changed before the retry is asked again and sends nothing', async () => {
    items.set('8', { id: '8', title: 'Draft' });
    const asked = await del('items', '8');
    await tk.kernel.asks.approve(String(asked.approvalID), 'once');
    items.set('8', { id: '8', title: 'Final — do not delete' });
    const retried = await del('items', '8');
    expect(retried.code).toBe('approvalRequired');
    expect(String(retried.message)).toMatch(/changed after you approved request/);
    expect(deletes()).toBe(0);
    expect((await card(retried.approvalID)).current).toEqual({
      id: '8',
      title: 'Final — do not delete',
    });
    await tk.kernel.asks.approve(String(retried.approvalID), 'once');
    expect((await del('items', '8')).code).toBeUndefined();
    expect(deletes()).toBe(1);
  });

  it('without a GET on the same path the card says the current resource is not shown', async () => {
    const asked = await del('notes', '9');
    expect((await card(asked.approvalID)).currentNote).toMatch(/has no GET \/notes\/\{item_id\}\//);
  });
});
