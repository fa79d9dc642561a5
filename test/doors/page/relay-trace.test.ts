/**
 * Page-relay trace propagation (issue 33): a page door call's trace reaches
 * the bridge hop — the relay's request frame carries the W3C `traceparent`
 * of the call's `handler` span, so what the bridge (or an extension) traces
 * for the command is a child of the call. Untraced, the frame has none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import { createPageDoor } from '../../../src/doors/page/door.js';
import { createTracing, type AirlockTracing } from '../../../src/telemetry/tracing.js';
import { conn, testKernel, type TestKernel } from '../../helpers/kernel.js';
import { otlpReceiver, type OtlpReceiver } from '../../helpers/otlp.js';
import { waitFor } from '../../helpers/wait.js';
import { authenticated, startRelay, type TestBridge } from './relay-helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function pageKernel(tracing: AirlockTracing | null) {
  const { puente, url } = await startRelay();
  cleanups.push(() => puente.close());
  const door = createPageDoor({ config: puente.config, puente, web: false });
  const tk: TestKernel = await testKernel([door], tracing ? { observer: tracing.observer } : {});
  cleanups.push(() => tk.dispose());
  const { b } = await authenticated(url);
  cleanups.push(async () => b.ws.close());
  return { tk, bridge: b };
}

/** Answers the next request frame the bridge gets, and returns it. */
async function answer(bridge: TestBridge): Promise<Record<string, unknown>> {
  const frame = await bridge.next();
  expect(frame.type).toBe('request');
  bridge.send({ type: 'response', id: frame.id, result: { actions: [] } });
  return frame;
}

describe('page relay trace propagation', () => {
  let receiver: OtlpReceiver;
  it('the relay request frame carries the call’s traceparent: its parent is the call’s handler span', async () => {
    receiver = await otlpReceiver();
    cleanups.push(() => receiver.close());
    const tracing = createTracing({ otlpUrl: `${receiver.url}/v1/traces`, exportAtOnce: true });
    cleanups.push(() => tracing.shutdown());
    const { tk, bridge } = await pageKernel(tracing);

    const TRACE = '5a'.repeat(16);
    const parent = propagation.extract(ROOT_CONTEXT, {
      traceparent: `00-${TRACE}-${'7b'.repeat(8)}-01`,
      tracestate: 'vendor=1',
    });
    const [outcome, frame] = await Promise.all([
      context.with(parent, () =>
        tk.kernel.call('page', 'wu_list_actions', {}, { connection: conn() }),
      ),
      answer(bridge),
    ]);
    expect(outcome).not.toMatchObject({ ok: false });
    expect(frame.command).toBe('list_actions');
    const sent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(frame.traceparent));
    expect(sent, String(frame.traceparent)).not.toBeNull();
    expect(sent![1]).toBe(TRACE);
    expect(frame.tracestate).toBe('vendor=1');

    // The span the frame names is the call's handler span, in the call's trace.
    await waitFor(() => receiver.spans().some((s) => s.spanId === sent![2]), {
      timeoutMs: 10_000,
      message: 'the handler span',
    });
    const handler = receiver.spans().find((s) => s.spanId === sent![2])!;
    expect(handler.name).toBe('handler');
    expect(handler.traceId).toBe(TRACE);
    await waitFor(() => receiver.spans().some((s) => s.spanId === handler.parentSpanId), {
      timeoutMs: 10_000,
      message: 'the call span',
    });
    const call = receiver.spans().find((s) => s.spanId === handler.parentSpanId)!;
    expect(call.name).toBe('call wu_list_actions');
    expect(call.parentSpanId).toBe('7b'.repeat(8));
  }, 30_000);

  it('untraced, the relay request frame carries no trace fields', async () => {
    const { tk, bridge } = await pageKernel(null);
    const [, frame] = await Promise.all([
      tk.kernel.call('page', 'wu_list_actions', {}, { connection: conn() }),
      answer(bridge),
    ]);
    expect(Object.keys(frame).sort()).toEqual(['command', 'id', 'params', 'type']);
  });
});
