/** Errors inside the contract for hostile input at the HTTP edge (issue 13 item 6, part). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { request } from 'node:http';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { hostnameOf, isLoopbackHost } from '../../src/transport/http/guards.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { connectClient } from '../helpers/mcp-client.js';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/client';
import { createMcpServer } from '../../src/transport/mcp/mcp-server.js';
import { stdioConnection } from '../../src/transport/mcp/mcp-stdio.js';
import type { ServingKernel } from '../../src/transport/surface.js';

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
const raw = (
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body = '',
  to: number = port,
) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: to, path, method, headers }, (res) => {
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

/** `levels` arrays inside each other. */
const nestedArrays = (levels: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

it('answers a 10,000-deep JSON body on POST /mcp with a JSON-RPC invalid request, not a 500', async () => {
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  const res = await raw(
    '/mcp',
    { host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...agent },
    'POST',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger_echo","arguments":{"text":${deep}}}}`,
  );
  expect(res.status).toBe(400);
  const body = JSON.parse(res.body) as {
    jsonrpc: string;
    error: { code: number; message: string };
  };
  expect(body.jsonrpc).toBe('2.0');
  expect(body.error.code).toBe(-32600);
  expect(body.error.message).toContain('nests deeper than 64 levels');
});

it('lets tool arguments 64 levels deep through /mcp to the tool, and refuses deeper ones at the edge', async () => {
  const client = await connectClient(`http://127.0.0.1:${port}/mcp`, {
    token: agent.authorization!.slice('Bearer '.length),
  });
  try {
    // `arguments` is level 1, so `deep` may hold 63 more: the tool itself answers (unknown field).
    const reached = await client.callTool({
      name: 'ledger_echo',
      arguments: { text: 'x', deep: nestedArrays(63) },
    });
    expect(reached.isError).toBe(true);
    expect(JSON.stringify(reached.content)).toContain("unknown field 'deep'");
    const refused = await client
      .callTool({ name: 'ledger_echo', arguments: { text: 'x', deep: nestedArrays(64) } })
      .then(
        () => null,
        (error: Error) => error,
      );
    expect(refused?.message).toContain('nests deeper than 64 levels');
  } finally {
    await client.close();
  }
});

it('refuses a REST JSON body nested deeper than 64 levels with 400 malformedRequest', async () => {
  const owner = await ownerHeaders(tk.kernel);
  const res = await raw(
    '/api/v1/approvals/x/approve',
    { host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...owner },
    'POST',
    JSON.stringify({ resource: nestedArrays(64) }),
  );
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body)).toMatchObject({
    status: 400,
    code: 'malformedRequest',
    maxDepth: 64,
    message: expect.stringContaining('nests deeper than 64 levels'),
  });
});

it('answers an unexpected throw on /mcp with a JSON-RPC internal error carrying a log id', async () => {
  const broken: ServingKernel = {
    ...tk.kernel,
    principals: {
      ...tk.kernel.principals,
      authenticate: () => Promise.reject(new Error('principal store down')),
    },
  };
  const brokenApp = createHttpApp({ kernel: broken, logger: silentLogger });
  const brokenPort = (await brokenApp.listen(0, '127.0.0.1')).port;
  try {
    const res = await raw(
      '/mcp',
      { host: `127.0.0.1:${brokenPort}`, 'content-type': 'application/json', ...agent },
      'POST',
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      brokenPort,
    );
    expect(res.status).toBe(500);
    const body = JSON.parse(res.body) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/log id [0-9a-f-]{36}/);
    expect(body).not.toHaveProperty('status');
  } finally {
    await brokenApp.close();
  }
});

it('answers 5,000-deep tool arguments over an MCP connection with a malformedRequest tool error, not -32603', async () => {
  // The server stdio serves, on a linked in-memory pair.
  const server = createMcpServer({
    kernel: tk.kernel,
    mounts: ['ledger'],
    identify: () => stdioConnection('deep-test', 'deep-client'),
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'deep-client', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    const r = await client.callTool({
      name: 'ledger_echo',
      arguments: { text: 'x', deep: nestedArrays(5000) },
    });
    expect(r.isError).toBe(true);
    const body = JSON.parse((r.content as { text: string }[])[0]!.text) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'malformedRequest', maxDepth: 64 });
    expect(body.message).toContain('the arguments nest deeper than 64 levels');
    const audited = await tk.kernel.audit.list();
    expect(audited.at(-1)).toMatchObject({ tool: 'ledger_echo', result: 'malformedRequest' });
  } finally {
    await client.close();
    await server.close();
  }
});
