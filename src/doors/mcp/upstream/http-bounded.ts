/**
 * Bounded reading of an HTTP upstream (streamable HTTP): the `fetch` the SDK
 * transport uses, wrapped so that no single upstream message over
 * `maxBytes` is ever held whole. A JSON answer over the limit, or an SSE
 * event that grows past it (an endless one included), is cut as it streams:
 * the upstream's body is cancelled and, in its place, the request the POST
 * carried is answered with the same synthesised error stdio uses
 * (bounded.ts, `data.airlock: 'resultTooLarge'`). Only that call fails; the
 * transport, its session and every other call stay up.
 */
import type { FetchLike, JSONRPCMessage } from '@modelcontextprotocol/client';
import { TOO_LARGE_CODE, TOO_LARGE_MARK } from './bounded.js';

export type Discarded = (bytes: number, id: string | number | null) => void;

type Id = string | number;

/** The ids of the JSON-RPC requests a POST body carries (one message or a batch). */
function requestIds(body: unknown): Id[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m: { id?: unknown; method?: unknown }) =>
      m && typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')
        ? [m.id]
        : [],
    );
  } catch {
    return [];
  }
}

function tooLarge(id: Id, bytes: number, limit: number): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: TOO_LARGE_CODE,
      message: `The upstream's answer was over the ${limit}-byte limit for one upstream message (${bytes} bytes read before it was cut); it was discarded.`,
      data: { airlock: TOO_LARGE_MARK, bytes, limit },
    },
  } as JSONRPCMessage;
}

const encoder = new TextEncoder();

/** A JSON body: held up to the limit (the SDK parses it whole), cut beyond it. */
function boundedJson(
  body: ReadableStream<Uint8Array>,
  ids: () => Id[],
  limit: number,
  discarded: Discarded,
  finished: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        await readWhole(controller);
      } finally {
        finished();
      }
    },
    cancel: () => {
      finished();
      return reader.cancel().catch(() => undefined);
    },
  });

  async function readWhole(controller: ReadableStreamDefaultController<Uint8Array>) {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done || !value) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => undefined);
        discarded(size, ids()[0] ?? null);
        const answers = ids().map((id) => tooLarge(id, size, limit));
        controller.enqueue(
          encoder.encode(JSON.stringify(answers.length === 1 ? answers[0] : answers)),
        );
        controller.close();
        return;
      }
      chunks.push(value);
    }
    for (const chunk of chunks) controller.enqueue(chunk);
    controller.close();
  }
}

/** The mark of the answer put in place of one the upstream never gave (its stream ended first). */
export const STREAM_ENDED_MARK = 'upstreamStreamEnded';

function streamEnded(id: Id): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: TOO_LARGE_CODE,
      message: 'The upstream closed its answer stream before answering.',
      data: { airlock: STREAM_ENDED_MARK },
    },
  } as JSONRPCMessage;
}

/**
 * Whether one SSE event is a JSON-RPC response (id with result or error, no
 * method), or carries an event id (the SDK then resumes the stream itself).
 * Keys are looked for with their quotes: inside a JSON string they are escaped.
 */
function answers(event: Buffer): boolean {
  if (event.subarray(0, 3).toString('latin1') === 'id:' || event.includes('\nid:')) return true;
  return (
    event.includes('"id"') &&
    (event.includes('"result"') || event.includes('"error"')) &&
    !event.includes('"method"')
  );
}

const ID_AT_START = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;

/**
 * An SSE body: passed on event by event; the event being read is held (at
 * most the limit) until its blank line. One growing past the limit ends the
 * stream: the POST's request is answered with the error instead.
 */
function boundedSse(
  body: ReadableStream<Uint8Array>,
  expectsAnswer: boolean,
  ids: () => Id[],
  limit: number,
  discarded: Discarded,
  finished: () => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let event: Uint8Array[] = [];
  let eventBytes = 0;
  /** Bytes of the current line seen so far (its own end not yet met). */
  let lineBytes = 0;
  /** Whether the POST's answer went by (or the stream can be resumed), so an early end is no loss. */
  let answered = !expectsAnswer;
  const flushEvent = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (!answered && event.length > 0)
      answered = answers(
        event.length === 1
          ? Buffer.from(event[0]!.buffer, event[0]!.byteOffset, event[0]!.byteLength)
          : Buffer.concat(event),
      );
    for (const part of event) controller.enqueue(part);
    event = [];
    eventBytes = 0;
  };
  return new ReadableStream<Uint8Array>({
    // One pull reads until it has passed something on: a pull that enqueues nothing is not called again.
    async pull(controller) {
      for (;;) {
        const step = await readOnce(controller);
        if (step === 'more') continue;
        if (step === 'cut') await cut(controller);
        if (step !== 'passed') finished();
        return;
      }
    },
    cancel: () => {
      finished();
      return reader.cancel().catch(() => undefined);
    },
  });

  async function readOnce(
    controller: ReadableStreamDefaultController<Uint8Array>,
  ): Promise<'passed' | 'more' | 'cut' | 'ended'> {
    {
      const { value, done } = await reader
        .read()
        .catch(() => ({ value: undefined, done: true as const }));
      if (done || !value) {
        flushEvent(controller);
        // The upstream went away before answering (and gave no event id to resume from).
        const id = answered ? undefined : ids()[0];
        if (id !== undefined)
          controller.enqueue(
            encoder.encode(`event: message\ndata: ${JSON.stringify(streamEnded(id))}\n\n`),
          );
        controller.close();
        return 'ended';
      }
      let passed = false;
      let start = 0;
      for (let i = 0; i < value.length; i++) {
        if (value[i] !== 0x0a) continue;
        const line = value.subarray(start, i + 1);
        // A blank line ("\n" or "\r\n" alone) ends the event.
        const blank =
          lineBytes === 0 && (line.length === 1 || (line.length === 2 && line[0] === 0x0d));
        event.push(line);
        eventBytes += line.length;
        lineBytes = 0;
        start = i + 1;
        if (blank) {
          flushEvent(controller);
          passed = true;
        } else if (eventBytes > limit) return 'cut';
      }
      if (start < value.length) {
        const rest = value.subarray(start);
        event.push(rest);
        eventBytes += rest.length;
        lineBytes += rest.length;
        if (eventBytes > limit) return 'cut';
      }
      return passed ? 'passed' : 'more';
    }
  }

  async function cut(controller: ReadableStreamDefaultController<Uint8Array>) {
    const head = Buffer.concat(event.slice(0, 4)).subarray(0, 512).toString('latin1');
    const bytes = eventBytes;
    event = [];
    eventBytes = 0;
    await reader.cancel().catch(() => undefined);
    const found = ID_AT_START.exec(head)?.[1];
    let id: Id | null = ids()[0] ?? null;
    if (found !== undefined && ids().length !== 1)
      try {
        id = JSON.parse(found) as Id;
      } catch {
        // keep the POST's
      }
    discarded(bytes, id);
    if (id !== null)
      controller.enqueue(
        encoder.encode(`event: message\ndata: ${JSON.stringify(tooLarge(id, bytes, limit))}\n\n`),
      );
    controller.close();
  }
}

/**
 * The SDK transport's signal (aborted when it closes) linked to a signal of
 * this request alone, unlinked when the request is done. Handed to `fetch`
 * as it is, it would gather one abort listener per request (undici removes
 * them only when each Request is collected), and undici counts them on
 * every request (`getEventListeners`) and warns past 1,500: over many calls
 * on one keep-alive session that was the largest per-call cost of the HTTP
 * upstream leg.
 */
function perRequest(outer: AbortSignal | null | undefined): {
  signal: AbortSignal | undefined;
  unlink: () => void;
} {
  if (!outer) return { signal: undefined, unlink: () => undefined };
  const inner = new AbortController();
  if (outer.aborted) {
    inner.abort(outer.reason);
    return { signal: inner.signal, unlink: () => undefined };
  }
  const abort = () => inner.abort(outer.reason);
  outer.addEventListener('abort', abort, { once: true });
  return { signal: inner.signal, unlink: () => outer.removeEventListener('abort', abort) };
}

/**
 * A JSON answer that says its length, within the limit: fetch reads no more
 * than `content-length` bytes of it (a longer body is a protocol error, not
 * a longer answer), so it needs no counting as it streams.
 */
function withinLimit(response: Response, limit: number): boolean {
  const length = response.headers.get('content-length');
  // A compressed body's length is not its decoded size (fetch decodes it): counted as it streams.
  const encoding = response.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') return false;
  return length !== null && /^\d{1,15}$/.test(length) && Number(length) <= limit;
}

/** `fetch` for the SDK's streamable HTTP transport, bounding every answer it reads. */
export function boundedFetch(
  limit: number,
  discarded: Discarded,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const { signal, unlink } = perRequest(init?.signal);
    const response = await base(url, signal ? { ...init, signal } : init).catch(
      (error: unknown) => {
        unlink();
        throw error;
      },
    );
    if (!response.body) {
      unlink();
      return response;
    }
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    // The POST's request ids, read from its body only when needed (an answer cut or missing).
    let known: Id[] | undefined;
    const ids = () => (known ??= init?.method === 'POST' ? requestIds(init.body) : []);
    const bounded =
      type === 'text/event-stream'
        ? boundedSse(response.body, init?.method === 'POST', ids, limit, discarded, unlink)
        : type === 'application/json' && init?.method === 'POST' && !withinLimit(response, limit)
          ? boundedJson(response.body, ids, limit, discarded, unlink)
          : null;
    // An answer read whole elsewhere (an error's text, a notification's 202) needs no abort on close.
    if (!bounded) {
      unlink();
      return response;
    }
    return new Response(bounded, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
