/**
 * How the mcp door names an upstream call's failure (forward.ts): the SDK
 * client's plain `Error('Not connected')` — its transport gone because the
 * upstream died while the call was under way — is a stopped upstream (a
 * write is uncertain, kernel §3), as its coded `NotConnected` is; any other
 * plain error stays the upstream's error.
 */
import { describe, expect, it } from 'vitest';
import { forwardCall } from '../../../src/doors/mcp/forward.js';
import type { Upstream } from '../../../src/doors/mcp/upstream/upstream.js';

const call = (upstream: Upstream) => ({
  upstream,
  tool: 'record',
  args: { text: 'x' },
  writes: false,
  timeoutMs: 1000,
  scrub: (t: string) => t,
});

const ctx = () => ({
  signal: new AbortController().signal,
  progress: async () => undefined,
  progressRequested: false,
});

describe('mcp door: an upstream whose connection is gone mid-call', () => {
  const failing = (error: Error) =>
    ({
      name: 'up',
      client: async () => ({
        callTool: async () => {
          throw error;
        },
      }),
      refusedAuthorization: async () => null,
      lost: () => undefined,
    }) as unknown as Upstream;

  it("the SDK's plain 'Not connected' is a stopped upstream: a write is uncertain, never an upstream error", async () => {
    const answer = await forwardCall(
      { ...call(failing(new Error('Not connected'))), writes: true },
      ctx(),
    );
    expect(answer).toMatchObject({
      ok: false,
      code: 'unavailable',
      data: { mutationUncertain: true },
    });
  });

  it('another plain error is still the upstream’s error', async () => {
    const answer = await forwardCall(call(failing(new Error('disk full'))), ctx());
    expect(answer).toMatchObject({ ok: false, code: 'upstreamError' });
  });
});
