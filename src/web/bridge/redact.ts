/**
 * Redaction before anything leaves the page (spec/page.md "Doing better"):
 * secret-named object keys, the same names in URL query strings, and
 * authorization headers/bearer values in text — for events, console, network
 * and the store alike.
 */
import { REDACTED, SECRET_WORDS_PATTERN, isSecretName } from './secret-names.js';

// Which names are secret is one rule, shared with the kernel (secret-names.ts).
export { REDACTED, isSecretName };

/** A JSON-safe deep copy with secret-named keys' values replaced. */
export function redactValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (depth > 24) return REDACTED;
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1, seen) ?? null);
  if (value instanceof Date) return value.toISOString();
  if (typeof Element !== 'undefined' && value instanceof Element)
    return `<${value.tagName.toLowerCase()}>`;
  if (value instanceof Error) return { name: value.name, message: redactText(value.message) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const r = isSecretName(k) ? REDACTED : redactValue(v, depth + 1, seen);
    if (r !== undefined) out[k] = r;
  }
  return out;
}

/**
 * A value read at a dot path: `[REDACTED]` when any segment of the path is a
 * secret name (`user.apiToken`, `auth.password.hash`), so a secret reached by
 * its own path is as hidden as one reached by walking its parent.
 */
export function redactAt(path: string, value: unknown): unknown {
  if (path.split('.').some((segment) => isSecretName(segment)))
    return value === undefined ? undefined : REDACTED;
  return redactValue(value);
}

/** A URL with secret-named query (and fragment) parameters and credentials replaced. */
export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw, typeof location !== 'undefined' ? location.href : 'http://localhost/');
  } catch {
    return redactText(raw);
  }
  if (url.username) url.username = REDACTED;
  if (url.password) url.password = REDACTED;
  for (const key of [...url.searchParams.keys()])
    if (isSecretName(key)) url.searchParams.set(key, REDACTED);
  if (url.hash.includes('=')) {
    const hash = new URLSearchParams(url.hash.slice(1));
    let changed = false;
    for (const key of [...hash.keys()])
      if (isSecretName(key)) {
        hash.set(key, REDACTED);
        changed = true;
      }
    if (changed) url.hash = hash.toString();
  }
  return url.toString();
}

const BEARER = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi;
/** `name=value`, `"name": "value"` and the like, where the name contains a secret word. */
const ASSIGNMENT = new RegExp(
  `((?:${SECRET_WORDS_PATTERN})[A-Za-z0-9_-]*)(["']?\\s*[:=]\\s*["']?)([^\\s"'&,;}]+)`,
  'gi',
);

/** Free text (console messages, error strings) with secret assignments and bearer values replaced. */
export function redactText(text: string): string {
  return text
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(ASSIGNMENT, (_m, key: string, sep: string) => `${key}${sep}${REDACTED}`);
}

/** Headers with secret-named values replaced (authorization, cookie, x-api-key…). */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    out[k.toLowerCase()] = isSecretName(k) ? REDACTED : redactText(v);
  return out;
}
