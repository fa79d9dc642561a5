/**
 * readBody (transport/http/http-util.ts) on a real loopback server: the
 * body whole, however it is chunked; a body over the cap refused while it
 * streams; a body that ends early an error, never a truncated body.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyTooLargeError, readBody } from '../../src/transport/http/http-util.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

/** A server whose every request's body is read with `max`; resolves with what readBody gave. */
async function reading(max: number) {
  let settle!: (outcome: Buffer | Error) => void;
  const outcome = new Promise<Buffer | Error>((r) => (settle = r));
  server = createServer((req: IncomingMessage, res) => {
    readBody(req, max).then(
      (body) => {
        settle(body);
        res.end('ok');
      },
      (error: Error) => {
        settle(error);
        if (!res.destroyed) res.end();
      },
    );
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { port, outcome };
}

const post = (port: number) =>
  request({ host: '127.0.0.1', port, method: 'POST', path: '/' }).on('error', () => undefined);

describe('readBody', () => {
  it('reads a body sent in several chunks whole', async () => {
    const { port, outcome } = await reading(1024);
    const req = post(port);
    req.write('{"a":');
    await new Promise((r) => setImmediate(r));
    req.write('[1,2,');
    req.end('3]}');
    expect(String(await outcome)).toBe('{"a":[1,2,3]}');
  });

  it('refuses a chunked body once it passes the cap, without waiting for its end', async () => {
    const { port, outcome } = await reading(10);
    const req = post(port);
    req.write('x'.repeat(8));
    req.write('x'.repeat(8)); // over the cap; the body never ends
    const error = await outcome;
    expect(error).toBeInstanceOf(BodyTooLargeError);
    req.destroy();
  });

  it('refuses a declared length over the cap before reading', async () => {
    const { port, outcome } = await reading(10);
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/',
      headers: { 'content-length': '11' },
    }).on('error', () => undefined);
    req.write('x');
    expect(await outcome).toBeInstanceOf(BodyTooLargeError);
    req.destroy();
  });

  it('fails a body that ends early instead of answering a truncated one', async () => {
    const { port, outcome } = await reading(1024);
    const req = post(port);
    const arrived = new Promise((r) => server!.once('request', r));
    req.write('{"partial":');
    await arrived;
    req.destroy();
    const error = await outcome;
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(Buffer);
  });
});
