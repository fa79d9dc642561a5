/**
 * Validation against the spec's schemas (compacted to JSON Schema 2020-12 by
 * the compiler) with Ajv. Each violation is reported with the JSON pointer
 * of the offending value inside the call's `args` (`/data/name`,
 * `/params/per_page`). Formats are not checked (the API checks them); an
 * unusable pattern in a document skips validation for that schema instead of
 * failing the call.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { describeValue } from '../../../kernel/index.js';
import { escapeToken } from '../document/errors.js';

export interface Violation {
  pointer: string;
  message: string;
}

const options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: false,
  unicodeRegExp: false,
  logger: false,
} as const;

export interface SchemaValidator {
  /** Violations, pointers prefixed with `base` (e.g. `/data`); `data` may be coerced in place (query). */
  check(schema: unknown, data: unknown, base: string): Violation[];
  /** True when `data` is valid (or the schema cannot be compiled). */
  accepts(schema: unknown, data: unknown): boolean;
}

/** `coerce`: query and header values may arrive as strings ("20" for an integer). */
export function createValidator(coerce: boolean): SchemaValidator {
  const ajv = new Ajv2020({ ...options, coerceTypes: coerce ? 'array' : false });
  const cache = new WeakMap<object, ValidateFunction | null>();
  const compiled = (schema: unknown): ValidateFunction | null => {
    if (schema === null || typeof schema !== 'object') return null;
    if (cache.has(schema)) return cache.get(schema)!;
    let fn: ValidateFunction | null;
    try {
      fn = ajv.compile(schema as object);
    } catch {
      fn = null;
    }
    cache.set(schema, fn);
    return fn;
  };
  return {
    check(schema, data, base) {
      const fn = compiled(schema);
      if (!fn || fn(data)) return [];
      return violations(fn.errors ?? [], base, data);
    },
    accepts(schema, data) {
      const fn = compiled(schema);
      return !fn || fn(data) === true;
    },
  };
}

/** The value at a JSON pointer (RFC 6901) inside `data`. */
function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const token of pointer.split('/').slice(1)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[token.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

function violations(errors: ErrorObject[], base: string, data: unknown): Violation[] {
  const seen = new Set<string>();
  const out: Violation[] = [];
  for (const e of errors) {
    let pointer = base + e.instancePath;
    let message = e.message ?? 'is invalid';
    const p = e.params as Record<string, unknown>;
    if (e.keyword === 'required' && typeof p.missingProperty === 'string') {
      pointer += `/${escapeToken(p.missingProperty)}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
      pointer += `/${escapeToken(p.additionalProperty)}`;
      message = 'is not a known property';
    } else if (e.keyword === 'type') {
      // A wrong type says what was sent (authority.md §4).
      message = `${message}; got ${describeValue(valueAt(data, e.instancePath))}`;
    } else if (e.keyword === 'enum' && Array.isArray(p.allowedValues)) {
      message = `must be one of ${p.allowedValues
        .slice(0, 20)
        .map((v) => JSON.stringify(v))
        .join(', ')}`;
    }
    const line = `${pointer || '/'} ${message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    out.push({ pointer: pointer || '/', message });
  }
  return out;
}
