/**
 * One HTTP exchange with the API, bounded: only under the base URL (its
 * origin and path, scope.ts), redirects followed only there (GET/HEAD) —
 * one that leads elsewhere is answered, never followed with the
 * credentials — a per-request timeout, a
 * cap on response bytes, and bounded retries of idempotent methods on
 * 429/503 honouring `Retry-After` (RFC 9110 §10.2.3).
 */
import { failure, type Failure } from '../../../kernel/index.js';
import { outsideBase } from './scope.js';

export interface UpstreamLimits {
  /** Per HTTP request (default 30 s; the kernel's per-call timeout bounds the whole call). */
  timeoutMs: number;
  /** Response body bytes read at most (default 16 MiB). */
  maxResponseBytes: number;
  /** Retries of idempotent methods on 429/503 (default 3). */
  maxRetries: number;
  /** The longest `Retry-After` honoured; longer ones are answered as they are (default 10 s). */
  maxRetryDelayMs: number;
}

export const DEFAULT_UPSTREAM: UpstreamLimits = {
  timeoutMs: 30_000,
  maxResponseBytes: 16 * 1024 * 1024,
  maxRetries: 3,
  maxRetryDelayMs: 10_000,
};

export interface UpstreamRequest {
  method: string;
  url: URL;
  /** The configured base URL: neither this request nor a redirect it answers leaves it. */
  base: URL;
  headers: Record<string, string>;
  body?: string | URLSearchParams | FormData | undefined;
  /** What messages call it (`GET /pets/{petId}`), never the URL with its query (it may hold a key). */
  label: string;
}

export interface UpstreamResponse {
  status: number;
  statusText: string;
  headers: Headers;
  /** Parsed JSON, or the text. */
  body: unknown;
  /** Characters of the body text. */
  length: number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export type FetchLike = (url: URL, init: RequestInit) => Promise<Response>;

/** Seconds or an HTTP date → milliseconds from now. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), {
      once: true,
    });
  });

async function readCapped(
  response: Response,
  max: number,
  label: string,
): Promise<string | Failure> {
  const declared = Number(response.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel().catch(() => undefined);
    return tooLarge(label, max);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(label, max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const tooLarge = (label: string, max: number) =>
  failure(
    'resultTooLarge',
    `${label} answered with more than ${max} bytes; narrow the request (fewer fields, filters, a smaller per_page).`,
  );

function parseBody(text: string, contentType: string | null, bytes: number): unknown {
  if (text === '') return null;
  // Images, archives, PDFs…: shown as what they are, not as mojibake.
  if (
    contentType &&
    !/json|text|xml|html|javascript|yaml|csv|x-www-form-urlencoded/i.test(contentType)
  )
    return { contentType, bytes, note: 'binary content is not shown' };
  if (/json/i.test(contentType ?? '') || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

export async function send(
  request: UpstreamRequest,
  options: { signal: AbortSignal; limits: UpstreamLimits; fetch?: FetchLike | undefined },
): Promise<UpstreamResponse | Failure> {
  const doFetch: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const { limits } = options;
  const origin = request.url.origin;
  let url = request.url;
  let redirects = 0;
  for (let attempt = 0; ; attempt++) {
    const timeout = AbortSignal.timeout(limits.timeoutMs);
    const signal = AbortSignal.any([options.signal, timeout]);
    let response: Response;
    try {
      response = await doFetch(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      if (options.signal.aborted) throw error;
      // fetch refuses a request it cannot build (a header value it cannot carry) before connecting.
      if (error instanceof TypeError && error.cause === undefined)
        return failure(
          'malformedRequest',
          `${request.label} could not be sent (${error.message}); nothing was sent. Fix the value it names and call again.`,
        );
      const idempotent = IDEMPOTENT.has(request.method);
      if (timeout.aborted) {
        return idempotent
          ? failure(
              'timeout',
              `${request.label} did not answer within ${limits.timeoutMs} ms; retry later or narrow the request.`,
            )
          : failure(
              'mutationUncertain',
              `${request.label} did not answer within ${limits.timeoutMs} ms; the write may have happened — read the resource before trying again.`,
            );
      }
      const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      const unsent = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/.test(String(code));
      if (!idempotent && !unsent)
        return failure(
          'mutationUncertain',
          `${request.label} failed in flight (${code}); the write may have happened — read the resource before trying again.`,
        );
      return failure(
        'unavailable',
        `Cannot reach ${origin} (${code}); check the base URL or retry later.`,
      );
    }
    if (REDIRECTS.has(response.status) && response.headers.get('location')) {
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location')!;
      const target = URL.canParse(location, url) ? new URL(location, url) : undefined;
      const outside = target ? outsideBase(target, request.base) : 'an unreadable URL';
      if (outside || !target)
        return failure(
          'upstreamError',
          `${request.label} answered HTTP ${response.status}, a redirect to ${outside}. It is not followed: requests, and the credentials they carry, go only under the base URL ${request.base.href}. If the API has moved, restart with a --base-url that includes its new location.`,
          { status: response.status, location },
        );
      if (!['GET', 'HEAD'].includes(request.method) || ++redirects > 3)
        return failure(
          'upstreamError',
          `${request.label} answered a redirect (HTTP ${response.status}) that is not followed.`,
          { status: response.status },
        );
      url = target;
      attempt--;
      continue;
    }
    if (
      (response.status === 429 || response.status === 503) &&
      IDEMPOTENT.has(request.method) &&
      attempt < limits.maxRetries
    ) {
      const wait = retryAfterMs(response.headers.get('retry-after')) ?? 250 * 2 ** attempt;
      if (wait <= limits.maxRetryDelayMs) {
        await response.body?.cancel().catch(() => undefined);
        await sleep(wait, options.signal);
        continue;
      }
    }
    const text = await readCapped(response, limits.maxResponseBytes, request.label);
    if (typeof text !== 'string') return text;
    const bytes = Buffer.byteLength(text);
    return {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      body: parseBody(text, response.headers.get('content-type'), bytes),
      length: text.length,
    };
  }
}
