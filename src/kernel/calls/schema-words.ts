/**
 * What a zod schema accepts, in words, for validation messages: "an integer
 * ≥ 0", "one of "png", "jpeg"", "a string or null". A zod issue says only
 * "expected number"; the schema at the path knows the rest
 * (authority.md §4: a wrong type is reported as a wrong type, with what to send).
 */
import type { z } from 'zod';

type Schema = z.core.$ZodType;
type Check = z.core.$ZodChecks;

/** Wrappers that do not change what is accepted (nullable is kept apart: it adds null). */
function unwrap(schema: Schema): { schema: Schema; nullable: boolean } {
  let s = schema;
  let nullable = false;
  for (let hops = 0; hops < 32; hops++) {
    const def = (s as z.core.$ZodTypes)._zod.def;
    if (def.type === 'nullable') nullable = true;
    if (
      def.type === 'nullable' ||
      def.type === 'optional' ||
      def.type === 'default' ||
      def.type === 'prefault' ||
      def.type === 'nonoptional' ||
      def.type === 'readonly' ||
      def.type === 'catch'
    )
      s = def.innerType;
    else if (def.type === 'pipe') s = def.in;
    else if (def.type === 'lazy') s = def.getter();
    else break;
  }
  return { schema: s, nullable };
}

const isObjectLike = (v: unknown): v is Record<PropertyKey, unknown> =>
  typeof v === 'object' && v !== null;

/** The option of a union that `value` was meant for: by discriminator, else by its keys. */
function optionFor(union: z.core.$ZodUnion, key: PropertyKey, value: unknown): Schema | undefined {
  const options = union._zod.def.options.filter((o) => childOf(o, key, undefined) !== undefined);
  const disc = (union._zod.def as { discriminator?: string }).discriminator;
  if (disc !== undefined && isObjectLike(value)) {
    const chosen = options.find((o) => o._zod.propValues?.[disc]?.has(value[disc] as never));
    if (chosen) return chosen;
  }
  if (isObjectLike(value)) {
    const keys = Object.keys(value);
    const fits = options.find((o) => {
      const def = (unwrap(o).schema as z.core.$ZodTypes)._zod.def;
      return def.type === 'object' && keys.every((k) => k in def.shape);
    });
    if (fits) return fits;
  }
  return options[0];
}

/** The schema one step down `key`, given the value found there (for choosing a union option). */
function childOf(schema: Schema, key: PropertyKey, value: unknown): Schema | undefined {
  const inner = unwrap(schema).schema as z.core.$ZodTypes;
  const def = inner._zod.def;
  switch (def.type) {
    case 'object':
      return typeof key === 'string' && Object.hasOwn(def.shape, key)
        ? def.shape[key]
        : (def.catchall ?? undefined);
    case 'array':
      return def.element;
    case 'record':
      return def.valueType;
    case 'tuple':
      return typeof key === 'number' ? (def.items[key] ?? def.rest ?? undefined) : undefined;
    case 'union': {
      const option = optionFor(inner as z.core.$ZodUnion, key, value);
      return option
        ? childOf(option, key, isObjectLike(value) ? value[key] : undefined)
        : undefined;
    }
    case 'intersection':
      return childOf(def.left, key, value) ?? childOf(def.right, key, value);
    default:
      return undefined;
  }
}

/** The schema at `path` inside `root`, walked alongside the input that failed (`input`). */
export function schemaAt(
  root: Schema,
  path: readonly PropertyKey[],
  input: unknown,
): Schema | undefined {
  let schema: Schema | undefined = root;
  let value = input;
  for (const key of path) {
    if (!schema) return undefined;
    schema = childOf(schema, key, value);
    value = isObjectLike(value) ? value[key] : undefined;
  }
  return schema;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? `an ${word}` : `a ${word}`);

/** A type name from a zod issue (`expected: "int"`) in words. */
export function typeWord(expected: string): string {
  switch (expected) {
    case 'int':
    case 'bigint':
      return 'an integer';
    case 'record':
    case 'map':
      return 'an object';
    case 'tuple':
    case 'set':
      return 'an array';
    case 'null':
    case 'undefined':
      return expected;
    default:
      return article(expected);
  }
}

export const quoteValue = (v: unknown) =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null
    ? JSON.stringify(v)
    : String(v);

export const oneOf = (values: readonly unknown[]) =>
  values.length === 1 ? quoteValue(values[0]) : `one of ${values.map(quoteValue).join(', ')}`;

/** "≥ 0", "between 1 and 100", "> 0 and ≤ 1". */
function bounds(checks: readonly Check[]): string {
  let low: { value: unknown; inclusive: boolean } | undefined;
  let high: { value: unknown; inclusive: boolean } | undefined;
  for (const c of checks) {
    const d = c._zod.def;
    if (d.check === 'greater_than') low = { value: d.value, inclusive: d.inclusive };
    if (d.check === 'less_than') high = { value: d.value, inclusive: d.inclusive };
  }
  if (low?.inclusive && high?.inclusive) return ` between ${low.value} and ${high.value}`;
  const parts = [
    low ? `${low.inclusive ? '≥' : '>'} ${low.value}` : '',
    high ? `${high.inclusive ? '≤' : '<'} ${high.value}` : '',
  ].filter(Boolean);
  return parts.length ? ` ${parts.join(' and ')}` : '';
}

/** " of at most 64 characters", " of 1 to 64 items". */
function lengths(checks: readonly Check[], unit: string): string {
  let min: number | undefined;
  let max: number | undefined;
  for (const c of checks) {
    const d = c._zod.def;
    if (d.check === 'min_length') min = d.minimum;
    if (d.check === 'max_length') max = d.maximum;
    if (d.check === 'length_equals') min = max = d.length;
  }
  const units = (n: number) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (min !== undefined && max !== undefined)
    return min === max ? ` of exactly ${units(min)}` : ` of ${min} to ${units(max)}`;
  if (min !== undefined && min > 0) return ` of at least ${units(min)}`;
  if (max !== undefined) return ` of at most ${units(max)}`;
  return '';
}

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  uuid: 'a UUID',
  guid: 'a GUID',
  email: 'an email address',
  url: 'a URL',
  datetime: 'an ISO 8601 date-time',
  date: 'an ISO 8601 date',
  time: 'an ISO 8601 time',
  duration: 'an ISO 8601 duration',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  base64: 'a base64 string',
  base64url: 'a base64url string',
};

/** A string format's name in words ("a UUID"), for invalid_format issues too. */
export const formatWord = (format: string) =>
  FORMAT_WORDS[format] ?? `a string in ${format} format`;

const INTEGER_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

function phrase(schema: Schema, depth: number): string | undefined {
  const s = schema as z.core.$ZodTypes;
  const def = s._zod.def;
  const checks = (def.checks ?? []) as Check[];
  switch (def.type) {
    case 'number': {
      const integer = checks.some(
        (c) => c._zod.def.check === 'number_format' && INTEGER_FORMATS.has(c._zod.def.format),
      );
      const multiple = checks.find((c) => c._zod.def.check === 'multiple_of');
      const step =
        multiple && multiple._zod.def.check === 'multiple_of'
          ? `, a multiple of ${multiple._zod.def.value}`
          : '';
      return `${integer ? 'an integer' : 'a number'}${bounds(checks)}${step}`;
    }
    case 'string': {
      const format = (def as { format?: string }).format;
      if (format && format !== 'regex') return formatWord(format);
      return `a string${lengths(checks, 'character')}`;
    }
    case 'array':
      return `an array${lengths(checks, 'item')}`;
    case 'tuple':
    case 'set':
      return 'an array';
    case 'object':
    case 'record':
    case 'map':
      return 'an object';
    case 'boolean':
      return 'a boolean (true or false)';
    case 'bigint':
      return 'an integer';
    case 'null':
      return 'null';
    case 'literal':
      return oneOf(def.values);
    case 'enum':
      return oneOf(Object.values(def.entries));
    case 'union': {
      const words = def.options.map((o) => expectedOf(o, depth + 1));
      if (words.some((w) => w === undefined)) return undefined;
      const unique = [...new Set(words)] as string[];
      return unique.length === 1
        ? unique[0]
        : `${unique.slice(0, -1).join(', ')} or ${unique[unique.length - 1]}`;
    }
    default:
      return undefined;
  }
}

/** What `schema` accepts, in words, or undefined when it cannot be said briefly. */
export function expectedOf(schema: Schema, depth = 0): string | undefined {
  // A union that contains itself (through z.lazy) is not said in words.
  if (depth > 8) return undefined;
  const { schema: inner, nullable } = unwrap(schema);
  const words = phrase(inner, depth);
  return words !== undefined && nullable && words !== 'null' ? `${words} or null` : words;
}
