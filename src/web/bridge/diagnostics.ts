/**
 * Console and network capture while the bridge is connected. `install()`
 * wraps console methods, `fetch` and XMLHttpRequest; `uninstall()` puts the
 * originals back (disconnect releases every interceptor it installed).
 * Entries are stored redacted.
 */
import { REDACTED, isSecretName, redactHeaders, redactText, redactUrl } from './redact.js';

const RING = 500;

export interface ConsoleEntry {
  level: 'log' | 'warn' | 'error';
  message: string;
  timestamp: number;
}

export interface NetworkEntry {
  type: 'fetch' | 'xhr';
  method: string;
  url: string;
  status: number | null;
  ok: boolean;
  durationMs: number;
  requestHeaders: Record<string, string>;
  error?: string;
  timestamp: number;
}

const consoleRing: ConsoleEntry[] = [];
const networkRing: NetworkEntry[] = [];
const push = <T>(ring: T[], e: T) => {
  ring.push(e);
  if (ring.length > RING) ring.shift();
};

function format(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === 'string') return a;
      if (a instanceof Error) return `${a.name}: ${a.message}`;
      try {
        return JSON.stringify(a, (k, v: unknown) => (k && isSecretName(k) ? REDACTED : v));
      } catch {
        return String(a);
      }
    })
    .join(' ');
}

type Restore = () => void;
let restores: Restore[] = [];

function headersOf(init: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  new Headers(init).forEach((v, k) => (out[k] = v));
  return out;
}

export function install(): void {
  // The page's console, wrapped (not used for logging).
  const con = globalThis.console as unknown as Record<string, (...args: unknown[]) => void>;
  if (restores.length > 0) return;
  const levels = { log: 'log', info: 'log', debug: 'log', warn: 'warn', error: 'error' } as const;
  for (const [method, level] of Object.entries(levels)) {
    const key = method as keyof typeof levels;
    const original = con[key]!;
    con[key] = (...args: unknown[]) => {
      push(consoleRing, {
        level,
        message: redactText(format(args)).slice(0, 10_000),
        timestamp: Date.now(),
      });
      original.apply(con, args);
    };
    restores.push(() => (con[key] = original));
  }

  const originalFetch = globalThis.fetch;
  if (typeof originalFetch === 'function') {
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const started = performance.now();
      const request = input instanceof Request ? input : null;
      const url = request ? request.url : String(input);
      const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
      const headers = { ...headersOf(request?.headers), ...headersOf(init?.headers) };
      const base = {
        type: 'fetch' as const,
        method,
        url: redactUrl(url),
        requestHeaders: redactHeaders(headers),
      };
      try {
        const response = await originalFetch(input, init);
        push(networkRing, {
          ...base,
          status: response.status,
          ok: response.ok,
          durationMs: Math.round(performance.now() - started),
          timestamp: Date.now(),
        });
        return response;
      } catch (error) {
        push(networkRing, {
          ...base,
          status: null,
          ok: false,
          durationMs: Math.round(performance.now() - started),
          error: redactText(String(error)),
          timestamp: Date.now(),
        });
        throw error;
      }
    };
    restores.push(() => (globalThis.fetch = originalFetch));
  }

  if (typeof XMLHttpRequest !== 'undefined') {
    const proto = XMLHttpRequest.prototype;
    const open = proto.open;
    const send = proto.send;
    const setHeader = proto.setRequestHeader;
    const meta = new WeakMap<
      XMLHttpRequest,
      { method: string; url: string; headers: Record<string, string> }
    >();
    proto.open = function (
      this: XMLHttpRequest,
      method: string,
      url: string | URL,
      ...rest: unknown[]
    ) {
      meta.set(this, { method: method.toUpperCase(), url: String(url), headers: {} });
      return (open as (...a: unknown[]) => void).call(this, method, url, ...rest);
    } as typeof proto.open;
    proto.setRequestHeader = function (this: XMLHttpRequest, name: string, value: string) {
      const m = meta.get(this);
      if (m) m.headers[name] = value;
      return setHeader.call(this, name, value);
    };
    proto.send = function (this: XMLHttpRequest, body?: Document | XMLHttpRequestBodyInit | null) {
      const m = meta.get(this);
      const started = performance.now();
      if (m)
        this.addEventListener('loadend', () =>
          push(networkRing, {
            type: 'xhr',
            method: m.method,
            url: redactUrl(m.url),
            status: this.status || null,
            ok: this.status >= 200 && this.status < 300,
            durationMs: Math.round(performance.now() - started),
            requestHeaders: redactHeaders(m.headers),
            timestamp: Date.now(),
          }),
        );
      return send.call(this, body);
    };
    restores.push(() => {
      proto.open = open;
      proto.send = send;
      proto.setRequestHeader = setHeader;
    });
  }
}

export function uninstall(): void {
  for (const r of restores.reverse()) r();
  restores = [];
}

export function consoleEntries(level: string, limit: number) {
  const entries = consoleRing.filter((e) => level === 'all' || e.level === level).slice(-limit);
  return { entries, count: entries.length };
}

export function networkEntries(filter: { method?: string; status?: number; limit: number }) {
  const requests = networkRing
    .filter((e) => filter.method === undefined || e.method === filter.method.toUpperCase())
    .filter((e) => filter.status === undefined || e.status === filter.status)
    .slice(-filter.limit);
  return { requests, count: requests.length };
}
