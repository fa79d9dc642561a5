/**
 * The mcp door carries the caller's trace to its upstream (issue 33): the
 * W3C context the kernel hands the handler (`ctx.traceContext`) goes in the
 * upstream `tools/call`'s `params._meta`, per the MCP semantic conventions;
 * untraced, no `_meta` is added.
 */
import { describe, expect, it } from 'vitest';
import { forwardCall } from '../../../src/doors/mcp/forward.js';
import type { Upstream } from '../../../src/doors/mcp/upstream/upstream.js';

function recordingUpstream() {
  const sent: Record<string, unknown>[] = [];
  const client = {
    callTool: async (params: Record<string, unknown>) => {
      sent.push(params);
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  };
  const upstream = { name: 'up', client: async () => client } as unknown as Upstream;
  return { sent, upstream };
}

const call = (upstream: Upstream) => ({
  upstream,
  tool: 'whoami',
  args: { name: 'x' },
  writes: false,
  timeoutMs: 1000,
  scrub: (t: string) => t,
});

const ctx = (traceContext?: () => Record<string, string>) => ({
  signal: new AbortController().signal,
  progress: async () => undefined,
  progressRequested: false,
  ...(traceContext ? { traceContext } : {}),
});

describe('mcp door trace context', () => {
  it('an upstream call carries the caller’s traceparent and tracestate in _meta', async () => {
    const { sent, upstream } = recordingUpstream();
    const traceparent = `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`;
    await forwardCall(
      call(upstream),
      ctx(() => ({ traceparent, tracestate: 'v=1' })),
    );
    expect(sent).toEqual([
      { name: 'whoami', arguments: { name: 'x' }, _meta: { traceparent, tracestate: 'v=1' } },
    ]);
  });

  it('untraced, the upstream call has no _meta', async () => {
    const { sent, upstream } = recordingUpstream();
    await forwardCall(
      call(upstream),
      ctx(() => ({})),
    );
    await forwardCall(call(upstream), ctx());
    expect(sent).toEqual([
      { name: 'whoami', arguments: { name: 'x' } },
      { name: 'whoami', arguments: { name: 'x' } },
    ]);
  });
});
