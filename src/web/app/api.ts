/**
 * The REST client of the UI (`/api/v1`, same origin). It is signed in as the
 * owner by the session secret it sends in a header on every request, reads
 * and the event stream included (authority.md §1; no cookie: a browser would
 * send one to every port of this host); JSON bodies go as
 * `application/json`. Failures arrive as the server's `{status, code,
 * message}` and become an `ApiError` whose message is the server's own
 * sentence (it says what to do next).
 */
export const API = '/api/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The owner session's secret and the header it goes in, from the sign-in
 * answer. Kept in memory and in this tab's sessionStorage (so a reload stays
 * signed in): both belong to this origin alone, so a page on another port
 * cannot read them.
 */
export interface OwnerSessionSecret {
  header: string;
  secret: string;
}

const STORAGE_KEY = 'airlock.ownerSession';

let session: OwnerSessionSecret | null = null;

function stored(): OwnerSessionSecret | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const value = raw ? (JSON.parse(raw) as Partial<OwnerSessionSecret>) : null;
    return value && typeof value.header === 'string' && typeof value.secret === 'string'
      ? { header: value.header, secret: value.secret }
      : null;
  } catch {
    return null;
  }
}

/** The session this tab is signed in with, if any. */
export function ownerSession(): OwnerSessionSecret | null {
  session ??= stored();
  return session;
}

export function setOwnerSession(value: OwnerSessionSecret | null): void {
  session = value;
  try {
    if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // storage unavailable: the session lives in memory until the page closes
  }
}

/** The session header for a fetch made outside `request` (the event stream). */
export function sessionHeaders(): Record<string, string> {
  const s = ownerSession();
  return s ? { [s.header]: s.secret } : {};
}

const listeners = new Set<() => void>();
/**
 * Called when this browser is no longer signed in: the server answered 401
 * (the session is missing, expired or was ended elsewhere), or the owner
 * signed out.
 */
export function onSessionEnded(listener: () => void): void {
  listeners.add(listener);
}

export function sessionEnded(): void {
  for (const l of listeners) l();
}

async function failureOf(res: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // not JSON: fall back to the status line
  }
  const message =
    typeof body.message === 'string' ? body.message : `${res.status} ${res.statusText}`.trim();
  return new ApiError(
    res.status,
    typeof body.code === 'string' ? body.code : 'http',
    message,
    body,
  );
}

export interface RequestOptions {
  body?: unknown;
  /** Raw bytes (e.g. a PDF) with their content type, instead of JSON. */
  raw?: { bytes: Blob | ArrayBuffer; type: string };
  /** A multipart form (the browser sets its content type and boundary). */
  form?: FormData;
  signal?: AbortSignal;
  /**
   * A sign-in attempt: its 401 is an answer to show, not a sign that the
   * session ended (which sends the page back to the sign-in screen).
   */
  signingIn?: boolean;
  /** Extra headers (the proof of presence). */
  headers?: Record<string, string>;
}

/**
 * Gets the proof of presence for a decision the server refused without one
 * (issue 25): set by `main.ts` to the passkey flow, so every owner decision
 * the page sends — approvals, policy, agents, upstreams — asks for the
 * passkey and is sent again once, with the assertion bound to it.
 */
let presence:
  ((method: string, path: string, body: unknown) => Promise<Record<string, string>>) | null = null;

export function onPresenceNeeded(
  get: (method: string, path: string, body: unknown) => Promise<Record<string, string>>,
): void {
  presence = get;
}

/** Fetches an API path (relative to /api/v1) and returns the raw response, throwing ApiError on failure. */
export async function request(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Response> {
  try {
    return await send(method, path, options);
  } catch (e) {
    // A decision without the owner's presence: use the passkey, then send it once more.
    if (
      !(e instanceof ApiError) ||
      e.status !== 403 ||
      e.body.presence !== 'passkey' ||
      !presence ||
      options.headers?.['x-airlock-presence'] ||
      options.form ||
      options.raw
    )
      throw e;
    const proof = await presence(method, path, options.body);
    return send(method, path, { ...options, headers: { ...options.headers, ...proof } });
  }
}

async function send(method: string, path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { ...sessionHeaders(), ...options.headers };
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.raw) {
    headers['content-type'] = options.raw.type;
    body = options.raw.bytes;
  } else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let res: Response;
  try {
    res = await fetch(`${API}/${path}`, {
      method,
      headers,
      // No cookie is needed or sent: the session travels in its header.
      credentials: 'omit',
      ...(body === undefined ? {} : { body }),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (e) {
    if (options.signal?.aborted) throw e;
    throw new ApiError(
      0,
      'unreachable',
      'Cannot reach the Airlock server; is `airlock serve` running?',
    );
  }
  if (!res.ok) {
    const failure = await failureOf(res);
    if (res.status === 401 && !options.signingIn) {
      setOwnerSession(null);
      sessionEnded();
    }
    throw failure;
  }
  return res;
}

export async function json<T>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<T> {
  const res = await request(method, path, options);
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

export const get = <T>(path: string, signal?: AbortSignal) =>
  json<T>('GET', path, signal ? { signal } : {});
export const post = <T>(path: string, body?: unknown) =>
  json<T>('POST', path, body === undefined ? {} : { body });
export const put = <T>(path: string, body: unknown) => json<T>('PUT', path, { body });
export const del = <T>(path: string) => json<T>('DELETE', path);

/** Fetches bytes (with the session header) and gives an object URL for img/a elements; revoke it when done. */
export async function objectUrl(path: string): Promise<string> {
  const res = await request('GET', path);
  return URL.createObjectURL(await res.blob());
}

/** Downloads an API resource as a file the browser saves. */
export async function download(path: string, filename: string): Promise<void> {
  const url = await objectUrl(path);
  saveUrl(url, filename);
}

export function saveUrl(url: string, filename: string): void {
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Whether the server's door list (from /healthz) includes a door. */
export async function doors(): Promise<string[]> {
  try {
    const res = await fetch('/healthz');
    const body = (await res.json()) as { doors?: string[] };
    return body.doors ?? [];
  } catch {
    return [];
  }
}
