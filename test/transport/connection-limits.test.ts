/** Slow and greedy clients (issue 13 item 9; authority.md §4): timeouts and a per-address cap. */
import { afterEach, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import {
  createHttpApp,
  type HttpApp,
  type HttpAppOptions,
} from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { waitFor } from '../helpers/wait.js';

let tk: TestKernel | undefined;
let app: HttpApp | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await app?.close();
  await tk?.dispose();
});

async function start(options: Partial<HttpAppOptions>) {
  tk = await testKernel([createLedgerDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger, ...options });
  return (await app.listen(0, '127.0.0.1')).port;
}

/** A raw socket; resolves once connected. Collects what the server sends and when it closes. */
function open(port: number) {
  return new Promise<{ socket: Socket; received: () => string; closed: Promise<void> }>(
    (resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.once('error', () => undefined);
      socket.once('connect', () => resolve({ socket, received: () => text, closed }));
      socket.once('error', reject);
    },
  );
}

it('one address over its connection cap gets 503 busy and is closed; a freed slot is usable again', async () => {
  const port = await start({ maxConnectionsPerAddress: 2 });
  const a = await open(port);
  await open(port);
  const third = await open(port);
  await third.closed;
  expect(third.received()).toMatch(/^HTTP\/1.1 503/);
  expect(third.received()).toContain('"code":"busy"');
  expect(third.received()).toMatch(/Retry-After: 1/);
  a.socket.destroy();
  await a.closed;
  // Once the server has seen the close, a new connection is served.
  await waitFor(
    async () =>
      (await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } }))
        .status === 200,
    { message: 'a freed slot to serve /healthz' },
  );
});

it('a client that never finishes its headers is cut off after the configured headers timeout', async () => {
  const port = await start({ headersTimeoutMs: 300 });
  const slow = await open(port);
  slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n'); // …and never the blank line
  const outcome = await Promise.race([
    slow.closed.then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still open'), 10_000)),
  ]);
  expect(outcome).toBe('closed');
  expect(slow.received()).toMatch(/^HTTP\/1.1 408/);
});
