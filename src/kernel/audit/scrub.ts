/**
 * Keeping configured secret values out of everything a door shows: results,
 * error messages, log lines and an upstream's metadata. A service may echo a
 * secret in any form it took on the wire — the URL of a failed request, a
 * header it decoded — so every form is scrubbed: as it is and in any letter
 * case, `encodeURIComponent`, the form encoding `URLSearchParams` writes
 * (`+` for a space, `%7E` for `~`), every byte percent-encoded, hex (either
 * case), `\uXXXX` escapes, HTML entities (named, decimal, hex), base64
 * (basic auth's `user:password`, or the value alone, at any of the three
 * byte offsets it can start at inside a longer text; standard and URL-safe),
 * and JSON-escaped, as a result shows a string. A value split across
 * adjacent text blocks is found by `scrubTextBlocks`. Doors refuse secrets
 * too short to tell apart from ordinary text. This is best effort against a
 * hostile service: one that encrypts, reverses or splits a secret in its own
 * way is not stopped.
 */
import { REDACTED } from './secret-names.js';
import type { Logger } from '../logger.js';

const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);
/** As encoders that write only ASCII show it (`\u00e9`). */
const asciiJsonEscaped = (s: string) =>
  jsonEscaped(s).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
const hex4 = (n: number) => n.toString(16).padStart(4, '0');
const HTML_NAMED: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * The base64 characters that depend on `value`'s bytes alone when they
 * start `offset` bytes into a longer encoded text (its neighbours change
 * the characters at either end).
 */
function base64At(value: Buffer, offset: number): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), value]).toString('base64');
  return encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + value.length)) / 6));
}

/** A form to look for, and whether letter case matters in it (base64: yes). */
interface Form {
  text: string;
  caseless: boolean;
}

function formsOf(value: string): Form[] {
  const bytes = Buffer.from(value);
  const caseless = [
    value,
    encodeURIComponent(value),
    new URLSearchParams([['', value]]).toString().slice(1),
    [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''),
    bytes.toString('hex'),
    [...value].map((c) => `\\u${hex4(c.charCodeAt(0))}`).join(''),
    [...value].map((c) => `&#${c.codePointAt(0)};`).join(''),
    [...value].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join(''),
    value.replace(/[&<>"']/g, (c) => HTML_NAMED[c]!),
    value.replace(/[&<>"']/g, (c) => (c === "'" ? '&apos;' : HTML_NAMED[c]!)),
  ];
  // Unpadded, so the form also matches inside a padded or longer base64 text.
  const whole = bytes.toString('base64').replace(/=+$/, '');
  const base64 = [whole, base64At(bytes, 0), base64At(bytes, 1), base64At(bytes, 2)];
  const exact = base64.flatMap((b) => [b, b.replace(/\+/g, '-').replace(/\//g, '_')]);
  const forms = new Map<string, Form>();
  const add = (text: string, isCaseless: boolean) => {
    if (text.length === 0) return;
    const known = forms.get(text);
    if (!known || (isCaseless && !known.caseless)) forms.set(text, { text, caseless: isCaseless });
  };
  for (const [list, isCaseless] of [
    [caseless, true],
    [exact, false],
  ] as const) {
    for (const form of list) {
      const escaped = jsonEscaped(form);
      add(form, isCaseless);
      add(escaped, isCaseless);
      add(jsonEscaped(escaped), isCaseless);
      add(asciiJsonEscaped(form), isCaseless);
      add(escaped.replace(/\//g, '\\/'), isCaseless);
    }
  }
  return [...forms.values()];
}

/** Every form `value` can take on the wire or in a result. */
export function wireForms(value: string): string[] {
  return formsOf(value).map((f) => f.text);
}

const anyCase = (c: string) =>
  /[a-z]/i.test(c)
    ? `[${c.toLowerCase()}${c.toUpperCase()}]`
    : c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
const patternOf = ({ text, caseless }: Form) =>
  caseless ? [...text].map(anyCase).join('') : text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Replaces every form of every value with `[REDACTED]`; `spans` says where they are. */
export interface Scrubber {
  (text: string): string;
  /** The [start, end) ranges of `text` that hold a form of a value. */
  spans(text: string): Array<[number, number]>;
}

/** Replaces every form of every value with `[REDACTED]`, longest first. */
export function createScrubber(values: string[]): Scrubber {
  const all = new Map<string, Form>();
  for (const form of values.flatMap(formsOf)) {
    const known = all.get(form.text);
    if (!known || (form.caseless && !known.caseless)) all.set(form.text, form);
  }
  const forms = [...all.values()].sort((a, b) => b.text.length - a.text.length);
  if (forms.length === 0) return Object.assign((text: string) => text, { spans: () => [] });
  const pattern = new RegExp(forms.map(patternOf).join('|'), 'g');
  return Object.assign((text: string) => text.replace(pattern, REDACTED), {
    spans: (text: string) =>
      [...text.matchAll(pattern)].map((m): [number, number] => [m.index, m.index + m[0].length]),
  });
}

/**
 * Content blocks with a value split across adjacent text blocks (`"sec"`,
 * `"ret"`): each run of text blocks is searched as one text, and the part
 * of each block a found value covers becomes `[REDACTED]`.
 */
export function scrubTextBlocks<T>(blocks: T[], scrub: Scrubber): T[] {
  const isText = (b: unknown): b is { type: 'text'; text: string } =>
    typeof b === 'object' &&
    b !== null &&
    (b as { type?: unknown }).type === 'text' &&
    typeof (b as { text?: unknown }).text === 'string';
  const out = [...blocks];
  for (let i = 0; i < out.length;) {
    if (!isText(out[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j < out.length && isText(out[j])) j++;
    if (j - i > 1) {
      const run = out.slice(i, j) as Array<{ type: 'text'; text: string }>;
      const joined = run.map((b) => b.text).join('');
      const hidden = new Uint8Array(joined.length);
      for (const [from, to] of scrub.spans(joined)) hidden.fill(1, from, to);
      let at = 0;
      run.forEach((block, k) => {
        let text = '';
        for (let c = 0; c < block.text.length; c++) {
          if (!hidden[at + c]) text += block.text[c];
          else if (c === 0 || !hidden[at + c - 1]) text += REDACTED;
        }
        at += block.text.length;
        out[i + k] = { ...block, text } as T;
      });
    }
    i = j;
  }
  return out;
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
