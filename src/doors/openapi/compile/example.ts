/**
 * Example values built from schemas, for the complete example input
 * `<prefix>_describe` shows. Required properties only (the smallest valid
 * body); the spec's own `example`/`default`/`enum` where present, else a
 * value that meets the type, format, pattern and bounds. Each candidate is
 * checked against the schema, so the example is a valid call.
 */
import { isObject } from '../../../kernel/index.js';
import { CYCLE } from '../document/refs.js';
import { objectShape } from './types.js';

type Obj = Record<string, unknown>;

export type Check = (schema: unknown, value: unknown) => boolean;

const FORMATS: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com',
  url: 'https://example.com',
  'uri-reference': 'https://example.com',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  uuid: '00000000-0000-4000-8000-000000000000',
  byte: 'ZXhhbXBsZQ==',
  binary: 'example',
  password: 'example',
};
const CANDIDATES = [
  '1',
  'example',
  'a',
  'abc',
  'A',
  'abc123',
  'ABC',
  '2024-01-01',
  '0',
  'aaaaaaaa',
  '1.0',
  'en-US',
  'example.com',
];

const typesOf = (s: Obj): string[] =>
  Array.isArray(s.type) ? s.type.map(String) : typeof s.type === 'string' ? [s.type] : [];

export interface ExampleOptions {
  /** Use the document's `example`/`default` values where present. */
  useExamples: boolean;
  check?: Check;
}

export function exampleOf(schema: unknown, options: ExampleOptions, depth = 0): unknown {
  if (!isObject(schema) || depth > 12) return {};
  if (typeof schema[CYCLE] === 'string') return {};
  if (schema.const !== undefined) return schema.const;
  if (options.useExamples && schema.example !== undefined) return schema.example;
  if (options.useExamples && schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0)
    return schema.enum.find((v) => v !== null) ?? schema.enum[0];
  for (const k of ['oneOf', 'anyOf'] as const) {
    const list = schema[k];
    if (Array.isArray(list) && list.length > 0) {
      // Non-null alternatives first; the first candidate the whole schema accepts wins.
      const ordered = [...list].sort((a, b) => Number(isNull(a)) - Number(isNull(b)));
      const base = { ...schema, [k]: undefined };
      let first: unknown;
      for (const alt of ordered) {
        const merged = mergeInto(base, alt);
        const value = exampleOf(merged, options, depth + 1);
        if (first === undefined) first = value;
        if (!options.check || options.check(schema, value)) return value;
      }
      return first;
    }
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const merged = schema.allOf.reduce<Obj>((acc, s) => mergeInto(acc, s), {
      ...schema,
      allOf: undefined,
    });
    return exampleOf(merged, options, depth + 1);
  }
  const types = typesOf(schema).filter((t) => t !== 'null');
  const shape = objectShape(schema);
  const type =
    types[0] ?? (shape.properties.length > 0 ? 'object' : schema.items ? 'array' : undefined);
  switch (type) {
    case 'object': {
      const out: Obj = {};
      // A body that is one optional envelope (`{data: {...}}`, Asana) shows the envelope.
      const envelope = depth === 0 && shape.required.size === 0 && shape.properties.length === 1;
      for (const [name, sub] of shape.properties) {
        if ((!shape.required.has(name) && !envelope) || sub.readOnly === true) continue;
        out[name] = exampleOf(sub, options, depth + 1);
      }
      return out;
    }
    case 'array': {
      // One item at least: an empty required array is often no argument at all (a query without the key).
      const n = Math.max(
        typeof schema.minItems === 'number' ? schema.minItems : 0,
        typeof schema.maxItems === 'number' && schema.maxItems === 0 ? 0 : 1,
      );
      return Array.from({ length: n }, (_, i) => {
        const v = exampleOf(schema.items, options, depth + 1);
        return typeof v === 'string' && n > 1
          ? `${v}${i}`
          : typeof v === 'number' && n > 1
            ? v + i
            : v;
      });
    }
    case 'integer':
    case 'number':
      return numberFor(schema, type === 'integer');
    case 'boolean':
      return true;
    case 'string':
      return stringFor(schema);
    case 'null':
      return null;
    default:
      return {};
  }
}

const isNull = (s: unknown) =>
  isObject(s) &&
  (s.type === 'null' || (Array.isArray(s.enum) && s.enum.length === 1 && s.enum[0] === null));

function mergeInto(base: Obj, extra: unknown): Obj {
  if (!isObject(extra)) return base;
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) continue;
    if (k === 'properties' && isObject(out.properties) && isObject(v))
      out.properties = { ...out.properties, ...v };
    else if (k === 'required' && Array.isArray(out.required) && Array.isArray(v))
      out.required = [...out.required, ...v];
    else if (k === 'allOf' && Array.isArray(out.allOf) && Array.isArray(v))
      out.allOf = [...out.allOf, ...v];
    else out[k] = v;
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

function numberFor(schema: Obj, integer: boolean): number {
  let n = 1;
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const exMin = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const exMax = typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : undefined;
  if (min !== undefined && n < min) n = min;
  if (exMin !== undefined && n <= exMin) n = exMin + 1;
  if (schema.exclusiveMinimum === true && min !== undefined && n <= min) n = min + 1;
  if (max !== undefined && n > max) n = max;
  if (exMax !== undefined && n >= exMax) n = exMax - 1;
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0)
    n = Math.ceil(n / schema.multipleOf) * schema.multipleOf;
  return integer ? Math.round(n) : n;
}

function stringFor(schema: Obj): string {
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const fits = (s: string) => s.length >= min && s.length <= max;
  if (typeof schema.pattern === 'string') {
    let re: RegExp | undefined;
    try {
      re = new RegExp(schema.pattern, 'u');
    } catch {
      re = undefined;
    }
    const all = [
      ...(typeof schema.format === 'string' && FORMATS[schema.format]
        ? [FORMATS[schema.format]!]
        : []),
      ...CANDIDATES,
    ];
    const found = re && all.find((c) => re.test(c) && fits(c));
    if (found) return found;
  }
  const byFormat = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (byFormat && fits(byFormat)) return byFormat;
  let s = 'example';
  if (s.length < min) s = s.padEnd(min, 'x');
  if (s.length > max) s = s.slice(0, Math.max(min, max));
  return s;
}
