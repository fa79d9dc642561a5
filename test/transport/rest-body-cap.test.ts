import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { ServedDoor } from '../../src/transport/surface.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';

const uploads: ServedDoor = {
  name: 'uploads',
  tools: [],
  http: {
    routes: [
      {
        method: 'POST',
        path: 'uploads/big',
        summary: 'accepts up to 200 KB',
        maxBodyBytes: 200 * 1024,
        audience: 'public',
        body: 'raw',
        handler: async ({ body }) => ({ status: 200, body: { bytes: (body as Buffer).length } }),
      },
      {
        method: 'POST',
        path: 'uploads/small',
        summary: 'server default cap',
        audience: 'public',
        body: 'raw',
        handler: async ({ body }) => ({ status: 200, body: { bytes: (body as Buffer).length } }),
      },
    ],
  },
};

let tk: TestKernel;
let app: HttpApp;
let base: string;
beforeAll(async () => {
  tk = await testKernel([uploads]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger, maxBodyBytes: 64 * 1024 });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

const post = (path: string, size: number) =>
  fetch(`${base}/api/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(size),
  });

describe('REST body caps', () => {
  it('a route may raise the body cap for uploads, and is still capped', async () => {
    const ok = await post('uploads/big', 100 * 1024);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ bytes: 100 * 1024 });
    expect((await post('uploads/big', 300 * 1024)).status).toBe(413);
  });

  it('other routes keep the server default cap', async () => {
    expect((await post('uploads/small', 100 * 1024)).status).toBe(413);
    expect((await post('uploads/small', 10 * 1024)).status).toBe(200);
  });
});
