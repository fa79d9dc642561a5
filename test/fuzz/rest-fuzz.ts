/**
 * A door's REST routes over real HTTP with garbage requests: path parameters
 * that are dot segments, NUL, unpaired surrogates or 5,000 characters;
 * junk query strings; bodies that are junk JSON, broken JSON, nested past
 * the cap, over the body limit or random bytes, under any content type; as
 * the owner, an agent, nobody or a forged token. Every error answer must be
 * the REST error body `{status, code, message}` with a catalogue code and the
 * status line's status, `internal` only as 500 with its log id, and the server
 * must keep answering.
 */
import { Agent, request } from 'node:http';
import fc from 'fast-check';
import { expect } from 'vitest';
import { ERROR_CODES } from '../../src/kernel/errors.js';
import { MAX_JSON_DEPTH } from '../../src/kernel/calls/json-depth.js';
import { HTTP_STATUS } from '../../src/transport/http/http-status.js';
import type { RestRoute } from '../../src/transport/surface.js';
import { ODD_STRINGS, PROTOTYPE_KEYS, junk } from './garbage.js';
import { brief, must, replay, report, seedFor, type Tally } from './tool-fuzz.js';

/** Requests per route (fewer than tool inputs: each is a real HTTP round trip); FUZZ_REST_RUNS overrides. */
export const REST_RUNS = Number(process.env.FUZZ_REST_RUNS ?? (process.env.CI ? 300 : 100));

export interface RestFuzzTarget {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Authorization headers to pick from, the most useful first: the first two are drawn 4 times as often. */
  callers: readonly Record<string, string>[];
  /** Domain words: known ids, and the door's argument names as body keys. */
  words: readonly string[];
  /** The app's default body cap. */
  maxBodyBytes: number;
}

interface Garbage {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

interface Answer {
  status: number;
  text: string;
  /** The server cut the connection while a body over the cap was still being sent. */
  cut?: true;
}

/** Percent-encodes a path segment, unpaired surrogates included (as their replacement character's bytes). */
function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  }
}

/** Segments sent as they are: dot segments and broken escapes the server must see raw. */
const RAW_SEGMENTS = ['..', '.', '%', '%zz', '%00', '%2F', '%2e%2e', '%2e', ';', '~', '%C0%AE'];

function segment(words: readonly string[]): fc.Arbitrary<string> {
  const encoded = fc
    .oneof(
      fc.constantFrom(...ODD_STRINGS),
      fc.string({ unit: 'binary', maxLength: 30 }),
      words.length ? fc.constantFrom(...words) : fc.string(),
      fc.uuid(),
      fc.constant('s'.repeat(5000)),
    )
    .map(encodeSegment);
  return fc.oneof(
    { weight: 4, arbitrary: encoded },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
  );
}

const QUERY_KEYS = [
  'limit',
  'afterId',
  'door',
  'status',
  'decision',
  'rule',
  'format',
  'page',
  'id',
];

function query(words: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    fc.constantFrom(...QUERY_KEYS, ...PROTOTYPE_KEYS),
    fc.string({ maxLength: 8 }),
  );
  const value = fc.oneof(
    fc.constantFrom(...ODD_STRINGS, '-1', '0', '1e308', '99999999999999999999', 'NaN'),
    words.length ? fc.constantFrom(...words) : fc.string(),
    fc.string({ maxLength: 20 }),
  );
  return fc
    .array(fc.tuple(key, value), { maxLength: 4 })
    .map((pairs) =>
      pairs.length
        ? `?${pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&')}`
        : '',
    );
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'multipart/form-data; boundary=fuzz',
  'multipart/form-data',
  'application/zip',
  'application/pdf',
  'image/png',
  'application/octet-stream',
];

const BROKEN_JSON = [
  '{',
  '{"a":',
  '[1,]',
  'nul',
  '\u0000',
  '\uFEFF{}',
  '"unterminated',
  '{"a":1}{"b":2}',
  '1e99999',
];

const MAGIC = [
  'PK\u0003\u0004',
  '%PDF-1.7\n',
  '\u0089PNG\r\n\u001a\n',
  '--fuzz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n',
];

function body(target: RestFuzzTarget, route: RestRoute): fc.Arbitrary<Buffer | undefined> {
  const keys = fc.oneof(
    fc.constantFrom(...PROTOTYPE_KEYS),
    target.words.length ? fc.constantFrom(...target.words) : fc.string(),
    fc.string({ maxLength: 10 }),
  );
  const value = junk({ words: target.words, requestBytes: 64 * 1024 });
  const object = fc.dictionary(keys, value, { maxKeys: 5 });
  const json = fc.oneof(object, value).map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
  const nested = fc
    .constantFrom(MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 100, 5000)
    .map((d) => Buffer.from('['.repeat(d) + ']'.repeat(d)));
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
    fc
      .tuple(fc.constantFrom(...MAGIC), fc.uint8Array({ maxLength: 200 }))
      .map(([m, b]) => Buffer.concat([Buffer.from(m, 'latin1'), Buffer.from(b)])),
  );
  const cap =
    route.maxBodyBytes === undefined
      ? [fc.constant(Buffer.alloc(target.maxBodyBytes + 1, 0x20))]
      : [];
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 32, arbitrary: json },
    { weight: 8, arbitrary: fc.constantFrom(...BROKEN_JSON).map((t) => Buffer.from(t)) },
    { weight: 4, arbitrary: nested },
    { weight: 12, arbitrary: bytes },
    // Over the body cap: megabytes per request, so rare.
    ...cap.map((arbitrary) => ({ weight: 1, arbitrary })),
  );
}

function garbageRequest(target: RestFuzzTarget, route: RestRoute): fc.Arbitrary<Garbage> {
  const params = route.path.match(/\{\w+\}/g) ?? [];
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
  return fc
    .record({
      method: fc.oneof(
        { weight: 9, arbitrary: fc.constant(route.method) },
        { weight: 1, arbitrary: fc.constantFrom(...methods) },
      ),
      segments: fc.array(segment(target.words), {
        minLength: params.length,
        maxLength: params.length,
      }),
      query: query(target.words),
      caller: fc.oneof(
        ...target.callers.map((_, i) => ({ weight: i < 2 ? 4 : 1, arbitrary: fc.constant(i) })),
      ),
      contentType: fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/json') },
        { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
        { weight: 1, arbitrary: fc.constant(null) },
      ),
      // Now and then from a foreign page (the guard's 403), mostly as a plain client.
      origin: fc.oneof(
        { weight: 19, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constant('http://evil.example') },
      ),
      body: body(target, route),
    })
    .map((r) => {
      let i = 0;
      const path = `/api/v1/${route.path.replace(/\{\w+\}/g, () => r.segments[i++] ?? '')}${r.query}`;
      const headers: Record<string, string> = { ...target.callers[r.caller] };
      if (r.contentType !== null) headers['content-type'] = r.contentType;
      if (r.origin !== null) headers.origin = r.origin;
      const sendsBody = r.method !== 'GET' && r.method !== 'HEAD';
      return { method: r.method, path, headers, body: sendsBody ? r.body : undefined };
    });
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

function send(base: string, g: Garbage, overCap: boolean): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: g.method,
        path: g.path,
        headers: { ...g.headers, ...(g.body ? { 'content-length': String(g.body.length) } : {}) },
        // A body over the cap may be cut off mid-send: never reuse that connection.
        agent: overCap ? false : keepAlive,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (overCap && (error.code === 'EPIPE' || error.code === 'ECONNRESET'))
        resolve({ status: 0, text: '', cut: true });
      else reject(error);
    });
    req.end(g.body);
  });
}

/** Statuses a REST answer may have: success, or the one status of a catalogue code (plus 401, 405, 415). */
const ERROR_STATUSES = new Set([...Object.values(HTTP_STATUS), 401, 405, 415]);
const codes: ReadonlySet<string> = new Set(ERROR_CODES);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function checkRestAnswer(g: Garbage, answer: Answer): void {
  if (answer.cut) return;
  const { status } = answer;
  const shown = () => `${status} ${brief(answer.text)}`;
  if (status < 400) {
    must(status >= 200, () => `a success is 2xx: ${shown()}`);
    return;
  }
  must(ERROR_STATUSES.has(status), () => `the status is one the catalogue maps to: ${shown()}`);
  if (g.method === 'HEAD') return;
  let error: Record<string, unknown> = {};
  try {
    error = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    must(false, () => `an error answer is JSON: ${shown()}`);
  }
  must(
    error.status === status && codes.has(String(error.code)),
    () =>
      `the body is {status, code, message} with the status line's status and a catalogue code: ${shown()}`,
  );
  must(
    typeof error.message === 'string' && error.message.length > 0,
    () => `with a message: ${shown()}`,
  );
  if (status === 500 || error.code === 'internal')
    must(
      error.code === 'internal' &&
        status === 500 &&
        typeof error.logId === 'string' &&
        UUID.test(error.logId),
      () => `internal is 500 with its log id: ${shown()}`,
    );
  // Garbage is the caller's mistake: a route that throws on it is a bug, log id or not.
  must(status !== 500, () => `a route threw: ${shown()}`);
}

/** The server answers its health check. */
export async function expectServing(base: string): Promise<void> {
  const res = await fetch(`${base}/healthz`);
  expect(res.status).toBe(200);
}

/** Throws garbage requests at one route; throws a report naming the seed and the request on the first failure. */
export async function fuzzRoute(
  target: RestFuzzTarget,
  route: RestRoute,
  runs = REST_RUNS,
): Promise<Tally> {
  const name = `${route.method} ${route.path}`;
  const tally: Tally = {};
  const details = await fc.check(
    fc.asyncProperty(garbageRequest(target, route), async (g) => {
      const overCap = (g.body?.length ?? 0) > (route.maxBodyBytes ?? target.maxBodyBytes);
      const answer = await send(target.base, g, overCap);
      tally[answer.status] = (tally[answer.status] ?? 0) + 1;
      checkRestAnswer(g, answer);
      if (answer.cut || answer.status >= 500) await expectServing(target.base);
    }),
    { numRuns: runs, seed: seedFor(name) },
  );
  if (details.failed) {
    const [g] = details.counterexample ?? [];
    const error =
      details.errorInstance instanceof Error
        ? details.errorInstance.message
        : String(details.errorInstance);
    throw new Error(
      `${replay(`${name} failed after ${details.numRuns} requests`, details.seed, details.counterexamplePath)}\n` +
        `request: ${g?.method} ${brief(g?.path, 300)} ${brief(g?.headers)} body ${brief(g?.body?.toString('utf8'), 300)}\n${error}`,
    );
  }
  await expectServing(target.base);
  report(name, tally);
  return tally;
}
