/**
 * The one test for "a JSON object": what parsed JSON, tool arguments and
 * OpenAPI documents hold as `{...}`. Arrays and null are `typeof 'object'`
 * too, and are not.
 *
 * @example
 * isObject({ a: 1 }); // true
 * isObject([1]); // false
 * isObject(null); // false
 */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
