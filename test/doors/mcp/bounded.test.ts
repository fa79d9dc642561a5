/**
 * An upstream message over `limits.upstreamMessageBytes` (default 8 MiB) is
 * discarded as it streams: the one call answers `resultTooLarge`, and the
 * upstream stays up for every other call — one in flight at the same time
 * included. Against an SDK server on stdio answering 30 MiB.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { callTool, errorOf, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';
import { BoundedReadBuffer } from '../../../src/doors/mcp/upstream/bounded.js';

const script = fileURLToPath(new URL('../../fixtures/mcp/big-upstream.mjs', import.meta.url));
let ws: GatewayWorkspace;
let alice: Client;

beforeAll(async () => {
  ws = await gatewayWorkspace(
    { big: { command: process.execPath, args: [script] } },
    // The kernel's own response limit above the upstream's, so the upstream's is the one met.
    {
      kernel: {
        limits: {
          big: { responseBytes: 64 * 1024 * 1024, resultTokens: 10_000_000, timeoutMs: 60_000 },
        },
      },
    },
  );
  alice = await ws.agent('alice');
}, 30_000);

afterAll(async () => {
  await ws?.close();
});

describe('bounded upstream messages', () => {
  it('a 30 MiB answer is resultTooLarge, a concurrent call on the same upstream succeeds, and the upstream is not restarted', async () => {
    const pid = ws.gateway.runtime('big')!.upstream.status().pid;
    const [big, slow] = await Promise.all([
      callTool(alice, 'big_big', { mib: 30 }),
      callTool(alice, 'big_slow', { ms: 300 }),
    ]);
    expect(errorOf(big)).toMatchObject({ code: 'resultTooLarge' });
    expect(errorOf(big).message).toMatch(/over the 8388608-byte limit/);
    expect(slow.isError).toBeFalsy();
    expect(slow.content[0]!.text).toBe('slept 300');
    const after = await callTool(alice, 'big_echo', { text: 'still here' });
    expect(after.content[0]!.text).toBe('still here');
    expect(ws.gateway.runtime('big')!.upstream.status()).toMatchObject({
      state: 'running',
      restarts: 0,
      pid,
    });
  }, 60_000);

  it('a 5 MiB answer (under the limit) passes', async () => {
    const r = await callTool(alice, 'big_big', { mib: 5 });
    expect(r.isError, r.content[0]!.text!.slice(0, 300)).toBeFalsy();
    expect(r.content[0]!.text!.length).toBe(5 * 1024 * 1024);
  }, 30_000);
});

describe('BoundedReadBuffer', () => {
  const feed = (buffer: BoundedReadBuffer, text: string, chunk = 7) => {
    for (let i = 0; i < text.length; i += chunk)
      buffer.append(Buffer.from(text.slice(i, i + chunk)));
  };

  it('never holds more than the limit of one message, and answers its id with an error in its place', () => {
    const discarded: number[] = [];
    const buffer = new BoundedReadBuffer(100, (bytes) => void discarded.push(bytes));
    const big = JSON.stringify({ result: { text: 'y'.repeat(1000) }, jsonrpc: '2.0', id: 7 });
    const small = JSON.stringify({ jsonrpc: '2.0', id: 8, result: {} });
    feed(buffer, `${big}\n${small}\n`);
    expect(buffer.readMessage()).toMatchObject({
      id: 7,
      error: { data: { airlock: 'resultTooLarge', bytes: big.length, limit: 100 } },
    });
    expect(buffer.readMessage()).toEqual({ jsonrpc: '2.0', id: 8, result: {} });
    expect(buffer.readMessage()).toBeNull();
    expect(discarded).toEqual([big.length]);
  });

  it('finds the id at the start too, and a string id', () => {
    const buffer = new BoundedReadBuffer(50, () => undefined);
    feed(
      buffer,
      `${JSON.stringify({ jsonrpc: '2.0', id: 'a"b', result: { t: 'z'.repeat(200) } })}\n`,
      13,
    );
    expect(buffer.readMessage()).toMatchObject({ id: 'a"b', error: { code: -32099 } });
  });
});
