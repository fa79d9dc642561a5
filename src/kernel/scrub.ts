/**
 * Keeping configured secret values out of everything a door shows: results,
 * error messages and log lines. A service may echo a secret in any form it
 * took on the wire — the URL of a failed request, a header it decoded — so
 * every form is scrubbed: as it is, `encodeURIComponent`, the form encoding
 * `URLSearchParams` writes (`+` for a space, `%7E` for `~`), base64 (basic
 * auth's `user:password`, or the value alone; standard and URL-safe), and
 * JSON-escaped, as a result shows a string. Percent escapes match in either
 * case. Doors refuse secrets too short to tell apart from ordinary text.
 */
import { REDACTED } from './secret-names.js';
import type { Logger } from './logger.js';

const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);
/** As encoders that write only ASCII show it (`\u00e9`). */
const asciiJsonEscaped = (s: string) =>
  jsonEscaped(s).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** Every form `value` can take on the wire or in a result. */
export function wireForms(value: string): string[] {
  // Unpadded, so the form also matches inside a padded or longer base64 text.
  const base64 = Buffer.from(value).toString('base64').replace(/=+$/, '');
  const encoded = [
    value,
    encodeURIComponent(value),
    new URLSearchParams([['', value]]).toString().slice(1),
    base64,
    base64.replace(/\+/g, '-').replace(/\//g, '_'),
  ];
  const forms = new Set<string>();
  for (const form of encoded) {
    const escaped = jsonEscaped(form);
    forms
      .add(form)
      .add(escaped)
      .add(jsonEscaped(escaped))
      .add(asciiJsonEscaped(form))
      .add(escaped.replace(/\//g, '\\/'));
  }
  return [...forms];
}

const anyCaseHex = (c: string) => (/[a-f]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c);
const patternOf = (form: string) =>
  form
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    .replace(
      /%([0-9A-F])([0-9A-F])/g,
      (_, a: string, b: string) => `%${anyCaseHex(a)}${anyCaseHex(b)}`,
    );

/** Replaces every form of every value with `[REDACTED]`, longest first. */
export function createScrubber(values: string[]): (text: string) => string {
  const forms = [...new Set(values.flatMap(wireForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return (text) => text;
  const pattern = new RegExp(forms.map(patternOf).join('|'), 'g');
  return (text) => text.replace(pattern, REDACTED);
}

/** A deep copy of a JSON value with every string (and key) scrubbed. */
export function scrubValue(value: unknown, scrub: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object' || depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, scrub, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [scrub(k), scrubValue(v, scrub, depth + 1)]),
  );
}

/** A logger with every string it is given scrubbed. */
export function scrubbedLogger(logger: Logger, scrub: (text: string) => string): Logger {
  const clean = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string') return scrub(value);
    if (value instanceof Error)
      return { type: value.name, message: scrub(value.message), stack: scrub(value.stack ?? '') };
    if (value === null || typeof value !== 'object') return value;
    if (depth > 8) return '[nested too deep]';
    if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v, depth + 1)]));
  };
  const level =
    (name: 'debug' | 'info' | 'warn' | 'error') =>
    (first: Record<string, unknown> | string, msg?: string) => {
      if (typeof first === 'string') logger[name](scrub(first));
      else logger[name](clean(first, 0) as Record<string, unknown>, msg && scrub(msg));
    };
  return {
    debug: level('debug'),
    info: level('info'),
    warn: level('warn'),
    error: level('error'),
    child: (bindings) => scrubbedLogger(logger.child(bindings), scrub),
  };
}
