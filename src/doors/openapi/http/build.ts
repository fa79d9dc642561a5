/**
 * Turns checked arguments into a request: path ids percent-encoded into the
 * template (values that would change the path refused first, in
 * `unsafePathValue`), query parameters serialised per their style, the body
 * encoded for its content type, and the URL checked to stay under the
 * base URL (scope.ts). Header values are checked before (`unsafeHeaderValue`,
 * used by the argument checks).
 */
import { isObject } from '../../../kernel/index.js';
import type { CatalogParam } from '../catalog.js';
import type { MethodEntry } from '../catalog-index.js';
import type { Credentials } from './auth.js';
import type { UpstreamRequest } from './send.js';
import { outsideBase } from './scope.js';

/**
 * True when `value` holds an unpaired UTF-16 surrogate: such text has no
 * UTF-8 form, so `encodeURIComponent` throws on it and `URLSearchParams`
 * silently sends U+FFFD instead.
 */
export function unpairedSurrogate(value: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
}

/** Why a path value would change the path, or null when it is safe. */
export function unsafePathValue(value: string): string | null {
  if (value === '') return 'it is empty';
  if (value === '.' || value === '..' || /(^|[\\/])\.\.?([\\/]|$)/.test(value))
    return "it contains '.' or '..' segments";
  if (/[/\\]/.test(value)) return "it contains '/' or '\\'";
  if (/^[a-z][a-z0-9+.-]*:/i.test(value) || value.startsWith('//')) return 'it is a URL';
  if (/%2f|%5c|%2e%2e/i.test(value)) return 'it contains an encoded separator';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'it contains control characters';
  return null;
}

/**
 * Why a header value cannot be sent, or null when it can (RFC 9110 §5.5:
 * no CR, LF or NUL; fetch also takes only Latin-1). CR/LF would otherwise
 * start another header.
 */
export function unsafeHeaderValue(value: string): string | null {
  if (/[\r\n]/.test(value)) return 'it contains a line break (CR or LF)';
  if (value.includes('\u0000')) return 'it contains a NUL character';
  if (/[\u0100-\uffff]/.test(value)) return 'it contains characters beyond Latin-1';
  return null;
}

export const scalar = (v: unknown): string =>
  typeof v === 'string'
    ? v
    : typeof v === 'number' || typeof v === 'boolean'
      ? String(v)
      : v === null
        ? ''
        : JSON.stringify(v);

function appendQuery(
  search: URLSearchParams,
  param: CatalogParam | undefined,
  name: string,
  value: unknown,
) {
  const style = param?.style ?? 'form';
  const explode = param?.explode ?? style === 'form';
  if (Array.isArray(value)) {
    if (explode) for (const v of value) search.append(name, scalar(v));
    else
      search.append(
        name,
        value
          .map(scalar)
          .join(style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ','),
      );
  } else if (isObject(value)) {
    const entries = Object.entries(value);
    if (style === 'deepObject')
      for (const [k, v] of entries) search.append(`${name}[${k}]`, scalar(v));
    else if (explode) for (const [k, v] of entries) search.append(k, scalar(v));
    else search.append(name, entries.flatMap(([k, v]) => [k, scalar(v)]).join(','));
  } else if (value !== undefined) {
    search.append(name, scalar(value));
  }
}

function encodeBody(contentType: string, data: unknown): string | URLSearchParams | FormData {
  if (/x-www-form-urlencoded/i.test(contentType)) {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries((data ?? {}) as Record<string, unknown>))
      appendQuery(form, undefined, k, v);
    return form;
  }
  if (/multipart\/form-data/i.test(contentType)) {
    const form = new FormData();
    for (const [k, v] of Object.entries((data ?? {}) as Record<string, unknown>))
      form.append(k, scalar(v));
    return form;
  }
  if (/json/i.test(contentType)) return JSON.stringify(data);
  return typeof data === 'string' ? data : JSON.stringify(data);
}

export interface BuildInput {
  method: MethodEntry;
  base: URL;
  pathValues: Record<string, string>;
  params: Record<string, unknown>;
  data: unknown;
  credentials: Credentials;
  extraHeaders: Record<string, string>;
}

export function buildRequest(input: BuildInput): UpstreamRequest {
  const { method, base } = input;
  const path = method.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(input.pathValues[name] ?? ''),
  );
  const basePath = base.pathname.replace(/\/+$/, '');
  const url = new URL(base.origin);
  url.pathname = `${basePath}${path.startsWith('/') ? path : `/${path}`}`;
  const headers: Record<string, string> = {
    accept: 'application/json, */*;q=0.5',
    ...input.extraHeaders,
  };
  const cookies = [...input.credentials.cookies];
  for (const [name, value] of Object.entries(input.params)) {
    const param = method.params.find((p) => p.name === name);
    if (param?.in === 'header') headers[name] = scalar(value);
    else if (param?.in === 'cookie') cookies.push(`${name}=${encodeURIComponent(scalar(value))}`);
    else appendQuery(url.searchParams, param, name, value);
  }
  for (const [name, value] of input.credentials.query) url.searchParams.append(name, value);
  Object.assign(headers, input.credentials.headers);
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  let body: UpstreamRequest['body'];
  if (method.body && input.data !== undefined) {
    body = encodeBody(method.body.contentType, input.data);
    if (typeof body === 'string') headers['content-type'] = method.body.contentType;
  }
  const outside = outsideBase(url, base);
  if (outside)
    throw new Error(`request URL left the base URL (${method.http} ${method.path}): ${outside}`);
  return {
    method: method.http,
    url,
    base,
    headers,
    body,
    label: `${method.http} ${method.path}`,
  };
}
