/**
 * The UI's event stream client, in Node with a scripted fetch: reconnects
 * with Last-Event-ID after the stream ends, and starts afresh (no id) after
 * the server was unreachable, since a restarted server counts ids from 1.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectEvents, type LiveEvent, type StreamState } from '../../src/web/app/event-stream.js';

type Step = { frames: string } | { refuse: true };

function scriptedFetch(steps: Step[]) {
  const seen: (string | undefined)[] = [];
  const fetchMock = vi.fn(async (_url: string, init: RequestInit) => {
    seen.push((init.headers as Record<string, string>)['last-event-id']);
    const step = steps.shift();
    if (!step) return new Promise<Response>(() => undefined); // stays connecting
    if ('refuse' in step) throw new TypeError('fetch failed');
    return new Response(step.frames, {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
    });
  });
  return { fetchMock, seen };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('event stream client', () => {
  it('delivers frames, then reconnects with Last-Event-ID when the stream ends', async () => {
    const { fetchMock, seen } = scriptedFetch([
      {
        frames:
          'retry: 2000\n\nid: 4\ndata: {"event":"snapshot","jobs":[]}\n\nid: 5\ndata: {"event":"grantRevoked","grantId":"g"}\n\n',
      },
      { frames: 'id: 6\ndata: {"event":"jobStarted","id":"j","kind":"k"}\n\n' },
    ]);
    vi.stubGlobal('fetch', fetchMock);
    const events: [string, string][] = [];
    const states: StreamState['state'][] = [];
    const stream = connectEvents({
      onEvent: (e: LiveEvent, id) => events.push([e.event, id]),
      onState: (s) => states.push(s.state),
      minDelayMs: 1,
      maxDelayMs: 2,
    });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    stream.close();
    expect(events).toEqual([
      ['snapshot', '4'],
      ['grantRevoked', '5'],
      ['jobStarted', '6'],
    ]);
    expect(seen).toEqual([undefined, '5', '6']);
    expect(states.slice(0, 4)).toEqual(['connecting', 'live', 'down', 'connecting']);
  });

  it('forgets the last id after the server was unreachable, so a restarted server sends a snapshot', async () => {
    const { fetchMock, seen } = scriptedFetch([
      { frames: 'id: 40\ndata: {"event":"snapshot","jobs":[]}\n\n' },
      { refuse: true },
    ]);
    vi.stubGlobal('fetch', fetchMock);
    const stream = connectEvents({
      onEvent: () => undefined,
      onState: () => undefined,
      minDelayMs: 1,
      maxDelayMs: 2,
    });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    stream.close();
    expect(seen).toEqual([undefined, '40', undefined]);
  });
});
