/**
 * Short type strings for signatures (`Pet[]`, `string(date-time)`,
 * `TaskRequest{name?: string, …}`), cut at 160 characters (spec/openapi.md),
 * and the compact schemas the door validates with: only validation keywords,
 * OpenAPI 3.0's `nullable` and boolean exclusive bounds rewritten as JSON
 * Schema 2020-12, read-only properties dropped from request schemas.
 */
import { isObject } from '../../../kernel/index.js';
import { CYCLE } from '../document/refs.js';

type Obj = Record<string, unknown>;

export const TYPE_MAX = 160;

export const cut = (text: string, max = TYPE_MAX) =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

export type NameOf = (schema: unknown) => string | undefined;

const cycleName = (ref: string) => ref.split('/').pop() ?? ref;

/** Properties and required names of an object schema, through allOf. */
export function objectShape(schema: unknown): {
  properties: [string, Obj][];
  required: Set<string>;
} {
  const properties = new Map<string, Obj>();
  const required = new Set<string>();
  const visit = (s: unknown, depth: number) => {
    if (!isObject(s) || depth > 8) return;
    if (isObject(s.properties))
      for (const [k, v] of Object.entries(s.properties))
        if (!properties.has(k)) properties.set(k, isObject(v) ? v : {});
    if (Array.isArray(s.required))
      for (const r of s.required) if (typeof r === 'string') required.add(r);
    if (Array.isArray(s.allOf)) for (const sub of s.allOf) visit(sub, depth + 1);
  };
  visit(schema, 0);
  return { properties: [...properties], required };
}

export function typeString(schema: unknown, nameOf: NameOf, depth = 0): string {
  return cut(rawType(schema, nameOf, depth));
}

function rawType(schema: unknown, nameOf: NameOf, depth: number): string {
  if (schema === true || schema === undefined) return 'any';
  if (!isObject(schema)) return 'any';
  if (typeof schema[CYCLE] === 'string') return cycleName(schema[CYCLE]);
  const name = nameOf(schema);
  const nullable = schema.nullable === true ? ' | null' : '';
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) {
    // Long enumerations are listed under "allowed", not in the type.
    if (schema.enum.length > 8)
      return `${typeof schema.type === 'string' ? schema.type : 'value'} (one of ${schema.enum.length})`;
    return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  }
  for (const k of ['oneOf', 'anyOf'] as const) {
    const list = schema[k];
    if (Array.isArray(list) && list.length > 0) {
      if (name && depth > 0) return name;
      return list.map((s) => rawType(s, nameOf, depth + 1)).join(' | ');
    }
  }
  const types = Array.isArray(schema.type)
    ? schema.type.map(String)
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  const shape = objectShape(schema);
  const isObj = types.includes('object') || (types.length === 0 && shape.properties.length > 0);
  if (isObj) {
    if (depth > 0 || shape.properties.length === 0) return `${name ?? 'object'}${nullable}`;
    const fields = shape.properties.map(
      ([k, v]) => `${k}${shape.required.has(k) ? '' : '?'}: ${rawType(v, nameOf, depth + 1)}`,
    );
    return `${name ?? ''}{${fields.join(', ')}}${nullable}`;
  }
  if (types.includes('array') || schema.items !== undefined) {
    const inner = rawType(schema.items, nameOf, depth + 1);
    return `${inner.includes(' ') ? `(${inner})` : inner}[]${nullable}`;
  }
  if (types.length === 0 && Array.isArray(schema.allOf) && schema.allOf.length > 0)
    return name ?? schema.allOf.map((s) => rawType(s, nameOf, depth + 1)).join(' & ');
  if (types.length === 0) return name ?? 'any';
  const shown = types.map((t) =>
    typeof schema.format === 'string' && t !== 'null' ? `${t}(${schema.format})` : t,
  );
  return shown.join(' | ') + nullable;
}

const KEEP = new Set([
  'type',
  'enum',
  'const',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'contains',
  'dependentRequired',
  'if',
  'then',
  'else',
  CYCLE,
]);
const SUB_ONE = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
];
const SUB_MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/**
 * The validation-only form of a resolved schema. `request`: read-only
 * properties are dropped (and no longer required), since a client never sends them.
 */
export function compactSchema(
  schema: unknown,
  request: boolean,
  memo = new WeakMap<object, unknown>(),
): unknown {
  if (!isObject(schema)) return schema === false ? false : {};
  const hit = memo.get(schema);
  if (hit !== undefined) return hit;
  if (typeof schema[CYCLE] === 'string') return { [CYCLE]: schema[CYCLE] };
  const out: Obj = {};
  const readOnly = new Set<string>();
  for (const [key, value] of Object.entries(schema)) {
    if (!KEEP.has(key)) continue;
    if (key === 'properties' && isObject(value)) {
      const props: Obj = {};
      for (const [name, sub] of Object.entries(value)) {
        if (request && isObject(sub) && sub.readOnly === true) {
          readOnly.add(name);
          continue;
        }
        props[name] = compactSchema(sub, request, memo);
      }
      out.properties = props;
    } else if (key === 'patternProperties' && isObject(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, compactSchema(v, request, memo)]),
      );
    } else if (SUB_ONE.includes(key) && isObject(value)) {
      out[key] = compactSchema(value, request, memo);
    } else if (SUB_MANY.includes(key) && Array.isArray(value)) {
      out[key === 'items' ? 'prefixItems' : key] = value.map((v) =>
        compactSchema(v, request, memo),
      );
    } else if (key === 'items' && Array.isArray(value)) {
      out.prefixItems = value.map((v) => compactSchema(v, request, memo));
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.required)) {
    const required = out.required.filter((r) => !readOnly.has(String(r)));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  // OpenAPI 3.0 → JSON Schema 2020-12.
  if (typeof out.exclusiveMinimum === 'boolean') {
    if (out.exclusiveMinimum && typeof out.minimum === 'number') {
      out.exclusiveMinimum = out.minimum;
      delete out.minimum;
    } else delete out.exclusiveMinimum;
  }
  if (typeof out.exclusiveMaximum === 'boolean') {
    if (out.exclusiveMaximum && typeof out.maximum === 'number') {
      out.exclusiveMaximum = out.maximum;
      delete out.maximum;
    } else delete out.exclusiveMaximum;
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    if (out.type === undefined && (out.allOf || out.oneOf || out.anyOf)) {
      const copy = { ...out };
      for (const k of Object.keys(out)) delete out[k];
      out.anyOf = [{ type: 'null' }, copy];
    }
  }
  memo.set(schema, out);
  return out;
}
