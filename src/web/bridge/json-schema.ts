/**
 * A small JSON Schema checker for action parameters: type, required,
 * properties, additionalProperties, enum, const, numeric and length bounds,
 * items, pattern. Returns the first problem, or null.
 */
export type JsonSchema = Record<string, unknown>;

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

function matchesType(value: unknown, type: unknown): boolean {
  const types = Array.isArray(type) ? type : [type];
  const actual = typeOf(value);
  return types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
}

export function checkSchema(
  schema: JsonSchema | undefined,
  value: unknown,
  path = 'params',
): string | null {
  if (!schema || typeof schema !== 'object') return null;
  if (schema.type !== undefined && !matchesType(value, schema.type))
    return `${path} must be ${JSON.stringify(schema.type)}, got ${typeOf(value)}`;
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))
  )
    return `${path} must be one of ${JSON.stringify(schema.enum)}`;
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    return `${path} must be ${JSON.stringify(schema.const)}`;
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum)
      return `${path} must be ≥ ${schema.minimum}`;
    if (typeof schema.maximum === 'number' && value > schema.maximum)
      return `${path} must be ≤ ${schema.maximum}`;
  }
  if (typeof value === 'string') {
    if (typeof schema.minLength === 'number' && value.length < schema.minLength)
      return `${path} must be at least ${schema.minLength} characters`;
    if (typeof schema.maxLength === 'number' && value.length > schema.maxLength)
      return `${path} must be at most ${schema.maxLength} characters`;
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value))
      return `${path} must match ${schema.pattern}`;
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems)
      return `${path} must have at least ${schema.minItems} items`;
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
      return `${path} must have at most ${schema.maxItems} items`;
    if (schema.items && typeof schema.items === 'object')
      for (let i = 0; i < value.length; i++) {
        const p = checkSchema(schema.items as JsonSchema, value[i], `${path}[${i}]`);
        if (p) return p;
      }
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    if (Array.isArray(schema.required))
      for (const key of schema.required)
        if (typeof key === 'string' && !(key in obj)) return `${path}.${key} is required`;
    for (const [key, v] of Object.entries(obj)) {
      if (props[key]) {
        const p = checkSchema(props[key], v, `${path}.${key}`);
        if (p) return p;
      } else if (schema.additionalProperties === false) return `${path}.${key} is not allowed`;
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        const p = checkSchema(schema.additionalProperties as JsonSchema, v, `${path}.${key}`);
        if (p) return p;
      }
    }
  }
  return null;
}
