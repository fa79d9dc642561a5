import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createSseParser, type SseMessage } from '../../src/web/app/sse-parser.js';
import { backoff } from '../../src/web/app/event-stream.js';

const parseAll = (chunks: string[]) => {
  const out: SseMessage[] = [];
  const parser = createSseParser((m) => out.push(m));
  for (const c of chunks) parser.push(c);
  return { out, parser };
};

const STREAM =
  'retry: 2000\n\n' +
  'id: 7\ndata: {"event":"snapshot","jobs":[]}\n\n' +
  ': keep-alive\n\n' +
  'id: 8\r\ndata: {"event":"jobProgress",\r\ndata: "overallPercent":50}\r\n\r\n' +
  'data: no id here\n\n';

describe('SSE parser', () => {
  it('dispatches each event with its id, joining data lines and skipping comments', () => {
    const { out, parser } = parseAll([STREAM]);
    expect(out).toEqual([
      { id: '7', event: 'message', data: '{"event":"snapshot","jobs":[]}' },
      { id: '8', event: 'message', data: '{"event":"jobProgress",\n"overallPercent":50}' },
      { id: '8', event: 'message', data: 'no id here' },
    ]);
    expect(parser.lastEventId).toBe('8');
    expect(parser.retry).toBe(2000);
  });

  it('gives the same events however the stream is split into chunks', () => {
    const whole = parseAll([STREAM]).out;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: STREAM.length }), { maxLength: 12 }),
        (cuts) => {
          const points = [...new Set(cuts)].sort((a, b) => a - b);
          const chunks: string[] = [];
          let at = 0;
          for (const p of points) {
            chunks.push(STREAM.slice(at, p));
            at = p;
          }
          chunks.push(STREAM.slice(at));
          expect(parseAll(chunks).out).toEqual(whole);
        },
      ),
    );
  });

  it('does not dispatch an event until its blank line arrives', () => {
    expect(parseAll(['id: 1\ndata: x\n']).out).toEqual([]);
  });
});

describe('reconnect backoff', () => {
  it('doubles from the minimum and stays within the maximum', () => {
    const mid = () => 1;
    expect([0, 1, 2, 3, 10].map((n) => backoff(n, 500, 10_000, mid))).toEqual([
      500, 1000, 2000, 4000, 10_000,
    ]);
    fc.assert(
      fc.property(fc.nat(100), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const d = backoff(n, 500, 10_000, () => r);
        return d >= 400 && d <= 10_000;
      }),
    );
  });
});
