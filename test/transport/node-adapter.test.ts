/**
 * The Node face of the SDK's web-standard handlers (transport/mcp/node-adapter.ts),
 * over a real node:http server: the parsed body and the caller's auth reach the
 * handler without the body being read again, a handler that throws answers a
 * JSON-RPC internal error, a streamed answer arrives as it is written, and a
 * client that goes away aborts the request's signal.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  HEADERS_HOLD_MS,
  nodeMcpHandler,
  type WebMcpHandler,
} from '../../src/transport/mcp/node-adapter.js';
import { waitFor } from '../helpers/wait.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Serves `handler` the way mcp-http.ts does: the body read and parsed first, auth on the request. */
async function serve(handler: WebMcpHandler, errors: Error[] = []) {
  const handle = nodeMcpHandler(handler, (e) => errors.push(e));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      (req as typeof req & { auth?: unknown }).auth = { token: '', clientId: 'ada', scopes: [] };
      void handle(req, res, text ? JSON.parse(text) : undefined);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('the Node adapter for web-standard MCP handlers', () => {
  it('hands the handler the parsed body and the caller, and leaves the body unread', async () => {
    let seen: { body?: unknown; client?: string; header?: string | null; bodyUsed?: boolean } = {};
    const url = await serve(async (request, extra) => {
      seen = {
        body: extra.parsedBody,
        client: extra.authInfo?.clientId,
        header: request.headers.get('mcp-protocol-version'),
        bodyUsed: request.bodyUsed,
      };
      return Response.json({ jsonrpc: '2.0', id: 1, result: {} });
    });
    const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(message),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect(seen).toEqual({
      body: message,
      client: 'ada',
      header: '2025-11-25',
      bodyUsed: false,
    });
  });

  it('answers a handler that throws with a JSON-RPC internal error echoing the id, and tells onerror', async () => {
    const errors: Error[] = [];
    const url = await serve(async () => {
      throw new Error('boom');
    }, errors);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'x7', method: 'tools/list' }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32603, message: 'Internal server error' },
      id: 'x7',
    });
    expect(errors.map((e) => e.message)).toEqual(['boom']);
  });

  it('streams an answer as it is written, and aborts the request when the client goes away', async () => {
    let aborted = false;
    let push!: (text: string) => void;
    const url = await serve(async (request) => {
      request.signal.addEventListener('abort', () => (aborted = true));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(new TextEncoder().encode(text));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    const controller = new AbortController();
    const res = await fetch(url, { signal: controller.signal });
    const reader = res.body!.getReader();
    push('data: one\n\n');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: one\n\n');
    push('data: two\n\n');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: two\n\n');
    controller.abort();
    await waitFor(() => aborted, { timeoutMs: 5_000 });
  });
  it('sends a streamed answer that ends within the hold in one write, its headers with its event', async () => {
    const url = new URL(
      await serve(async () => {
        // The SDK answers a POST with a stream at once; the call's result follows a little later.
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            setTimeout(() => {
              controller.enqueue(new TextEncoder().encode('event: message\ndata: {}\n\n'));
              controller.close();
            }, 3);
          },
        });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      }),
    );
    // A raw socket: each write of the server arrives as its own chunk here.
    const first = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`GET /mcp HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
      });
      socket.once('data', (chunk) => {
        resolve(chunk.toString('utf8'));
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).toContain('event: message');
    // Whole, as the SDK's own Node transport sends a quick answer: a length, not chunks.
    expect(first).toMatch(/\r\ncontent-length: 25\r\n/i);
    expect(first).not.toMatch(/transfer-encoding/i);
  });

  it('sends an answer still open after the hold as a stream: the events gathered first, then the rest as they come', async () => {
    let push!: (text: string) => void;
    let end!: () => void;
    const url = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(new TextEncoder().encode(text));
          end = () => controller.close();
        },
      });
      // An event within the hold (a progress notification), the result long after it.
      setTimeout(() => push('data: early\n\n'), 1);
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    const res = await fetch(url, { method: 'POST', body: '{}' });
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: early\n\n');
    push('data: late\n\n');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: late\n\n');
    end();
    expect((await reader.read()).done).toBe(true);
  });

  it('goes on serving when a client goes away while its answer is held', async () => {
    const controller = new AbortController();
    let calls = 0;
    let writtenToGone = false;
    const url = await serve(async (request) => {
      calls += 1;
      const first = calls === 1;
      let end!: () => void;
      const body = new ReadableStream<Uint8Array>({
        start(stream) {
          end = () => {
            stream.enqueue(new TextEncoder().encode('data: {}\n\n'));
            stream.close();
          };
        },
      });
      if (first) {
        // The client leaves within the hold; its answer ends once the server has seen it go.
        // On a loaded machine its leaving can arrive after the hold: the answer is streaming
        // by then, and the adapter has cancelled it when the connection closed.
        request.signal.addEventListener('abort', () =>
          setTimeout(() => {
            try {
              end();
            } catch {
              // cancelled by the adapter: nothing is written for a client that is gone
            } finally {
              writtenToGone = true;
            }
          }, 1),
        );
        controller.abort();
      } else end();
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    await expect(
      fetch(url, { method: 'POST', body: '{}', signal: controller.signal }),
    ).rejects.toThrow();
    await waitFor(() => writtenToGone, { timeoutMs: 5_000 });
    const res = await fetch(url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('10');
    expect(await res.text()).toBe('data: {}\n\n');
  });

  it('answers a JSON-RPC internal error when the answer’s stream fails within the hold, and tells onerror', async () => {
    const errors: Error[] = [];
    const url = await serve(
      async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              setTimeout(() => controller.error(new Error('transport gone')), 1);
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        ),
      errors,
    );
    const res = await fetch(url, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call' }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ id: 9, error: { code: -32603 } });
    expect(errors.map((e) => e.message)).toEqual(['transport gone']);
  });

  it('sends the headers of an answer still open after the hold, so the client knows the stream is open', async () => {
    const url = await serve(
      async () =>
        new Response(new ReadableStream<Uint8Array>(), {
          headers: { 'content-type': 'text/event-stream' },
        }),
    );
    const controller = new AbortController();
    const started = Date.now();
    const res = await fetch(url, { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_HOLD_MS - 1);
    controller.abort();
  });
});
