/**
 * A small structural check of a value against a resolved schema, for
 * choosing among `oneOf`/`anyOf` alternatives while building examples.
 * Compiling each alternative with Ajv would dominate compile time on large
 * documents (Discord has hundreds of `oneOf`s); the door still validates
 * every real call with Ajv.
 */
import { isObject } from '../../../kernel/index.js';
import { CYCLE } from '../document/refs.js';

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return typeof v === t;
  }
}

export function quickCheck(schema: unknown, value: unknown, depth = 0): boolean {
  if (!isObject(schema) || depth > 16 || typeof schema[CYCLE] === 'string') return true;
  const types = Array.isArray(schema.type)
    ? schema.type.map(String)
    : typeof schema.type === 'string'
      ? [schema.type]
      : [];
  if (schema.nullable === true && value === null) return true;
  if (types.length > 0 && !types.some((t) => typeOk(t, value))) return false;
  if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value))
    return false;
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))
  )
    return false;
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false;
    if (typeof schema.pattern === 'string') {
      try {
        if (!new RegExp(schema.pattern, 'u').test(value)) return false;
      } catch {
        /* an unusable pattern constrains nothing here */
      }
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) return false;
    if (typeof schema.maximum === 'number' && value > schema.maximum) return false;
  }
  if (isObject(value)) {
    const props = isObject(schema.properties) ? schema.properties : {};
    if (
      Array.isArray(schema.required) &&
      schema.required.some(
        (r) =>
          typeof r === 'string' &&
          !(r in value) &&
          !(isObject(props[r]) && props[r].readOnly === true),
      )
    )
      return false;
    for (const [k, v] of Object.entries(value)) {
      if (k in props) {
        if (!quickCheck(props[k], v, depth + 1)) return false;
      } else if (schema.additionalProperties === false) return false;
    }
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) return false;
    if (isObject(schema.items) && !value.every((v) => quickCheck(schema.items, v, depth + 1)))
      return false;
  }
  if (Array.isArray(schema.allOf) && !schema.allOf.every((s) => quickCheck(s, value, depth + 1)))
    return false;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((s) => quickCheck(s, value, depth + 1)))
    return false;
  if (
    Array.isArray(schema.oneOf) &&
    schema.oneOf.filter((s) => quickCheck(s, value, depth + 1)).length !== 1
  )
    return false;
  return true;
}
