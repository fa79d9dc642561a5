/**
 * The workspace's own `GET /api/v1/openapi.json` as a test target
 * (spec/openapi.md "Test targets"): compiled on the fly from its URL, then
 * called back through the door — the kernel's REST API reached through the
 * three generic tools.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { createLedgerDoor } from '../../../src/doors/testing/ledger.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { loadCatalog } from '../../../src/doors/openapi/load-catalog.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { mountDoor, type MountedDoor } from './helpers.js';
import { ownerHeaders } from '../../helpers/principals.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let door: MountedDoor;

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()]);
  // The route list is for agents too: on loopback an anonymous agent may read it.
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger, allowAnonymous: true });
  const address = await app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${address.port}`;
  // The approvals routes are the owner's: the door sends the owner token with every call.
  door = await mountDoor(await loadCatalog(`${base}/api/v1/openapi.json`), {
    prefix: 'airlock',
    baseUrl: base,
    headers: await ownerHeaders(tk.kernel),
  });
});
afterAll(async () => {
  await door?.close();
  await app?.close();
  await tk?.dispose();
});

it('compiles the workspace REST API from its URL and calls it back through the door', async () => {
  const resources = await door.call('resources', { query: 'approvals' });
  expect(resources.text).toContain('approvals');
  const listed = await door.call('call', { resource: 'approvals', method: 'list' });
  expect(listed.isError, listed.text).toBe(false);
  expect(JSON.parse(listed.text)).toEqual(expect.anything());
  const missing = await door.call('call', {
    resource: 'approvals',
    method: 'deny',
    args: { id: 'no-such-approval' },
  });
  expect(missing.isError).toBe(true);
  expect(JSON.parse(missing.text)).toMatchObject({ code: 'upstreamError' });
});
