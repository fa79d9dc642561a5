/** Errors inside the contract for hostile input at the HTTP edge (issue 13 item 6, part). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request } from 'node:http';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http-app.js';
import { hostnameOf, isLoopbackHost } from '../../src/transport/guards.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders } from '../helpers/principals.js';

let tk: TestKernel;
let app: HttpApp;
let port: number;
let agent: Record<string, string>;
beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  port = (await app.listen(0, '127.0.0.1')).port;
  agent = await agentHeaders(tk.kernel, 'edge');
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

/** A raw request, so the Host header is exactly what a hostile client sends. */
const raw = (path: string, headers: Record<string, string>, method = 'GET', body = '') =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });

it('only IP literals in 127/8, ::1 and localhost count as loopback binds', () => {
  expect(isLoopbackHost('127.0.0.1')).toBe(true);
  expect(isLoopbackHost('127.3.4.5')).toBe(true);
  expect(isLoopbackHost('localhost')).toBe(true);
  expect(isLoopbackHost('::1')).toBe(true);
  expect(isLoopbackHost('127.invalid')).toBe(false);
  expect(isLoopbackHost('127.0.0.1.evil.com')).toBe(false);
});

it('parses the Host header strictly: trailing text after a bracketed address is refused with 403', async () => {
  expect(hostnameOf('[::1]:7300')).toBe('[::1]');
  expect(hostnameOf('LocalHost:7300')).toBe('localhost');
  expect(hostnameOf('[::1].evil.com')).toBe('');
  expect(hostnameOf('127.0.0.1:80:90')).toBe('');
  const res = await raw(
    '/mcp',
    { host: '[::1].evil.com', 'content-type': 'application/json', ...agent },
    'POST',
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  );
  expect(res.status).toBe(403);
});

it('answers a /mcp/<door> path that is not valid percent-encoding with 400, not 500', async () => {
  const res = await raw('/mcp/%E0%A4%A', { host: `127.0.0.1:${port}`, ...agent }, 'POST', '{}');
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toMatchObject({ error: { code: -32600 } });
});
