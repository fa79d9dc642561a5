/**
 * Structured garbage for the fuzz suites: arguments drawn from a tool's
 * published JSON input schema, then broken the ways careless or hostile
 * clients break them — a field of the wrong type, a required field missing,
 * an unknown or prototype-named field, huge, NUL-laden or unpaired-surrogate
 * strings, nesting up to ~100 levels, numbers at the edges of what JSON and
 * the schema allow.
 */
import fc from 'fast-check';

type Schema = Record<string, unknown>;

/** Strings that have broken parsers, paths, digests and templates before. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\u202Eevil',
  '\uFEFF{}',
  '\r\n\r\n',
  'NaN',
  '-0',
  '1e308',
  '-1e308',
  'Infinity',
  '0x1F',
  ' 1',
  'null',
  'true',
  '[]',
  '{}',
  '../../../../etc/passwd',
  '..',
  '.',
  '/',
  '%00',
  '%2e%2e',
  '__proto__',
  'constructor',
  'prototype',
  "'; DROP TABLE audit; --",
  '${HOME}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '😀'.repeat(40),
  'ǅ̸̢̛̗̝̓̑'.repeat(20),
];

/** Numbers at the edges: negative zero, the largest doubles, past 2^53, fractions where integers go. */
export const EDGE_NUMBERS = [
  -0,
  0,
  -1,
  1,
  0.5,
  -1.5,
  1e308,
  -1e308,
  5e-324,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  1e21,
];

/** Keys that reach an object's prototype, or shadow its methods, when code trusts them. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

/** Sets `key` as an own, enumerable property, even `__proto__` (as JSON.parse does). */
export function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A deep copy that keeps own `__proto__` keys as data. */
export function clone<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => clone(v) as unknown) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) put(out, k, clone(v));
  return out as T;
}

/** `leaf` inside `depth` levels of alternating arrays and objects. */
export function nest(depth: number, leaf: unknown = 'deep'): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { d: value };
  return value;
}

export interface GarbageOptions {
  /** Words of the door's domain (known ids, names) mixed into every string. */
  words: readonly string[];
  /** The mount's request byte limit: huge strings are drawn just under and just over it. */
  requestBytes: number;
}

/** Strings just under and just over a request limit, made once per limit (they can be megabytes). */
const hugeStrings = new Map<number, string[]>();
function huge(requestBytes: number): string[] {
  let made = hugeStrings.get(requestBytes);
  if (!made) {
    const under = Math.max(1, requestBytes - 256);
    made = [
      'x'.repeat(under),
      '€'.repeat(Math.ceil(under / 3)),
      'y'.repeat(requestBytes + 1),
      // JSON writes each NUL as six bytes: half the limit, still under it.
      'a\u0000'.repeat(Math.ceil(under / 14)),
    ];
    hugeStrings.set(requestBytes, made);
  }
  return made;
}

const LONG_ARRAY = Array.from({ length: 20_000 }, (_, i) => `item${i}`);

/**
 * Junk of every JSON type for a field or a whole body. Strings around the
 * request limit (megabytes for some doors) are drawn rarely: a few per
 * thousand draws, enough to cross the limit from both sides in every run.
 */
export function junk({ words, requestBytes }: GarbageOptions): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 40, arbitrary: fc.constantFrom(...ODD_STRINGS) },
    { weight: 30, arbitrary: fc.constantFrom(...EDGE_NUMBERS) },
    { weight: 20, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 20, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
    { weight: 20, arbitrary: words.length ? fc.constantFrom(...words) : fc.string() },
    { weight: 20, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 10, arbitrary: fc.constantFrom(true, false, null, [], {}) },
    { weight: 10, arbitrary: fc.integer({ min: 1, max: 100 }).map((d) => nest(d)) },
    { weight: 10, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS).map((k) => polluted(k)) },
    { weight: 5, arbitrary: fc.constant('z'.repeat(10_000)) },
    { weight: 1, arbitrary: fc.constantFrom(...huge(requestBytes)) },
    { weight: 1, arbitrary: fc.constant(LONG_ARRAY) },
  );
}

/** `{"<key>": {"polluted": true}}` with the key as an own property. */
function polluted(key: string): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  put(o, key, { polluted: true, isAdmin: true });
  return o;
}

interface Context {
  root: Schema;
  words: readonly string[];
  depth: number;
  refs: Map<string, fc.Arbitrary<unknown>>;
}

const MAX_SCHEMA_DEPTH = 7;
const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object';

function resolveRef(ref: string, root: Schema): Schema {
  if (ref === '#') return root;
  const parts = ref.replace(/^#\//, '').split('/');
  let at: unknown = root;
  for (const p of parts) at = isSchema(at) ? at[p] : undefined;
  return isSchema(at) ? at : {};
}

/** Values the schema accepts, as far as JSON Schema says (zod may still refuse some). */
export function fromSchema(schema: Schema, ctx: Context): fc.Arbitrary<unknown> {
  if (ctx.depth > MAX_SCHEMA_DEPTH) return fc.constant(null);
  const deeper = { ...ctx, depth: ctx.depth + 1 };
  if (typeof schema.$ref === 'string') {
    const key = `${schema.$ref}@${ctx.depth}`;
    let arb = ctx.refs.get(key);
    if (!arb) {
      arb = fromSchema(resolveRef(schema.$ref, ctx.root), deeper);
      ctx.refs.set(key, arb);
    }
    return arb;
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum);
  for (const k of ['anyOf', 'oneOf'] as const) {
    const branches = schema[k];
    if (Array.isArray(branches) && branches.length)
      return fc.oneof(...branches.filter(isSchema).map((b) => fromSchema(b, deeper)));
  }
  if (Array.isArray(schema.allOf) && isSchema(schema.allOf[0]))
    return fromSchema(schema.allOf[0], deeper);
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((t: unknown) => fromSchema({ ...schema, type: t }, ctx)));
  switch (schema.type) {
    case 'object':
      return objectOf(schema, deeper);
    case 'array':
      return arrayOf(schema, deeper);
    case 'string':
      return stringOf(schema, ctx.words);
    case 'integer':
    case 'number':
      return numberOf(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectOf(schema: Schema, ctx: Context): fc.Arbitrary<unknown> {
  const props = isSchema(schema.properties) ? (schema.properties as Record<string, Schema>) : {};
  const keys = Object.keys(props);
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  // An externally tagged union (`{"addNode": {...}}`): exactly one of the optional keys.
  if (schema.maxProperties === 1 && required.length === 0 && keys.length)
    return fc.oneof(
      ...keys.map((k) => fromSchema(props[k]!, ctx).map((v) => ({ [k]: v }) as unknown)),
    );
  const record = fc.record(Object.fromEntries(keys.map((k) => [k, fromSchema(props[k]!, ctx)])), {
    requiredKeys: required.filter((k) => keys.includes(k)),
  });
  const extra = schema.additionalProperties;
  if (!isSchema(extra)) return record;
  return fc
    .tuple(
      record,
      fc.dictionary(fc.string({ maxLength: 12 }), fromSchema(extra, ctx), { maxKeys: 4 }),
    )
    .map(([r, more]) => {
      const out = clone(more);
      for (const [k, v] of Object.entries(r)) put(out, k, v);
      return out;
    });
}

function arrayOf(schema: Schema, ctx: Context): fc.Arbitrary<unknown> {
  const items = isSchema(schema.items) ? schema.items : {};
  const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : minLength + 4;
  return fc.array(fromSchema(items, ctx), {
    minLength,
    maxLength: Math.min(maxItems, minLength + 4),
  });
}

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const HEX64_PATTERN = '^[0-9a-f]{64}$';

/** Strings matching a pattern; the two patterns every door uses are drawn directly (stringMatching is slow). */
const matching = new Map<string, fc.Arbitrary<string>>([
  [UUID_PATTERN, fc.uuid()],
  [HEX64_PATTERN, fc.bigInt(0n, 2n ** 256n - 1n).map((n) => n.toString(16).padStart(64, '0'))],
]);
function matchingPattern(pattern: string): fc.Arbitrary<string> {
  let arb = matching.get(pattern);
  if (!arb) {
    arb = fc.stringMatching(new RegExp(pattern));
    matching.set(pattern, arb);
  }
  return arb;
}

function stringOf(schema: Schema, words: readonly string[]): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const fits = (s: string) =>
    s.length >= minLength && (maxLength === undefined || s.length <= maxLength);
  const options: fc.Arbitrary<string>[] = [];
  if (typeof schema.pattern === 'string') {
    const re = new RegExp(schema.pattern);
    options.push(matchingPattern(schema.pattern));
    const known = words.filter((w) => re.test(w) && fits(w));
    if (known.length) options.push(fc.constantFrom(...known));
    return fc.oneof(...options);
  }
  if (schema.format === 'uuid') options.push(fc.uuid());
  options.push(fc.string({ minLength, maxLength: Math.min(maxLength ?? 40, minLength + 40) }));
  options.push(
    fc.string({
      unit: 'grapheme',
      minLength,
      maxLength: Math.min(maxLength ?? 20, minLength + 20),
    }),
  );
  const known = words.filter(fits);
  if (known.length) options.push(fc.constantFrom(...known));
  if (maxLength !== undefined && maxLength <= 100_000)
    options.push(fc.constant('m'.repeat(maxLength)));
  return fc.oneof(...options);
}

function numberOf(schema: Schema): fc.Arbitrary<number> {
  const integer = schema.type === 'integer';
  const step = integer ? 1 : Number.EPSILON;
  const num = (k: string) => (typeof schema[k] === 'number' ? (schema[k] as number) : undefined);
  const exMin = num('exclusiveMinimum');
  const exMax = num('exclusiveMaximum');
  const min = num('minimum') ?? (exMin === undefined ? -1e9 : exMin + step);
  const max = num('maximum') ?? (exMax === undefined ? 1e9 : exMax - step);
  const lo = Math.max(min, -Number.MAX_SAFE_INTEGER);
  const hi = Math.min(max, Number.MAX_SAFE_INTEGER);
  const edges = fc.constantFrom(
    lo,
    hi,
    integer ? Math.ceil(lo) : lo,
    Math.min(hi, Math.max(lo, 0)),
  );
  if (!integer)
    return fc.oneof(fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }), edges);
  const [a, b] = [Math.ceil(lo), Math.floor(hi)];
  return fc.oneof(fc.bigInt(BigInt(a), BigInt(b)).map(Number), edges);
}

/** Where in a value a mutation lands: the value itself, or any object or array inside it. */
function containers(value: unknown): (Record<string, unknown> | unknown[])[] {
  const found: (Record<string, unknown> | unknown[])[] = [];
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    found.push(v as Record<string, unknown> | unknown[]);
    stack.push(...Object.values(v));
  }
  return found;
}

type Mutation =
  | { kind: 'replace' | 'extra'; at: number; key: string; value: unknown }
  | { kind: 'drop' | 'wrap'; at: number; depth: number };

function mutation(options: GarbageOptions): fc.Arbitrary<Mutation> {
  const key = fc.oneof(
    fc.constantFrom(...PROTOTYPE_KEYS),
    fc.string({ maxLength: 12 }),
    fc.constantFrom(...ODD_STRINGS),
  );
  const at = fc.nat();
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('replace' as const),
        at,
        key,
        value: junk(options),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('extra' as const), at, key, value: junk(options) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('drop' as const), at, depth: fc.constant(0) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('wrap' as const),
        at,
        depth: fc.integer({ min: 1, max: 100 }),
      }),
    },
  );
}

/** Applies one mutation to a copy of `value`; `replace` and `wrap` hit an existing field when there is one. */
function mutate(value: unknown, m: Mutation): unknown {
  const copy = clone(value);
  const spots = containers(copy);
  const spot = spots[m.at % Math.max(1, spots.length)];
  if (!spot) {
    // Not an object or array: replace it, or bury it.
    if (m.kind === 'replace' || m.kind === 'extra') return m.value;
    return m.kind === 'wrap' ? nest(m.depth, copy) : copy;
  }
  const keys = Array.isArray(spot) ? spot.map((_, i) => String(i)) : Object.keys(spot);
  const existing = keys.length ? keys[m.at % keys.length]! : undefined;
  const set = (k: string, v: unknown) =>
    Array.isArray(spot) ? (spot[Number(k)] = v) : put(spot, k, v);
  switch (m.kind) {
    case 'replace':
      set(existing ?? m.key, m.value);
      break;
    case 'extra':
      if (Array.isArray(spot)) spot.push(m.value);
      else put(spot, m.key, m.value);
      break;
    case 'drop':
      if (existing === undefined) break;
      if (Array.isArray(spot)) spot.splice(Number(existing), 1);
      else delete spot[existing];
      break;
    case 'wrap':
      if (existing === undefined) return nest(m.depth, copy);
      set(existing, nest(m.depth, (spot as Record<string, unknown>)[existing]));
      break;
  }
  return copy;
}

/**
 * Tool arguments: as the published schema allows (a third), broken once or
 * twice (most), or not an object at all. `examples` (valid arguments that
 * name things that exist) join what the schema draws, so broken variants of
 * calls that would succeed are drawn too, not only of calls that miss.
 */
export function argumentsFor(
  inputSchema: Schema,
  options: GarbageOptions,
  examples: readonly unknown[] = [],
): fc.Arbitrary<unknown> {
  const drawn = fromSchema(inputSchema, {
    root: inputSchema,
    words: options.words,
    depth: 0,
    refs: new Map(),
  });
  const valid = examples.length ? fc.oneof(drawn, fc.constantFrom(...examples)) : drawn;
  const m = mutation(options);
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 4, arbitrary: fc.tuple(valid, m).map(([v, a]) => mutate(v, a)) },
    { weight: 2, arbitrary: fc.tuple(valid, m, m).map(([v, a, b]) => mutate(mutate(v, a), b)) },
    { weight: 1, arbitrary: fc.oneof(junk(options), fc.constant(undefined)) },
  );
}
