/**
 * Published JSON Schemas, lean (issue 17: a `tools/list` an agent can
 * afford). The same constraints, fewer tokens:
 * - no ±2^53−1 bounds (zod writes them for every integer: JSON numbers
 *   beyond them are not integers a client can send anyway);
 * - a UUID written as `format: "uuid"` rather than its 80-character pattern;
 * - a sub-schema written out more than once (a scene node inside every op
 *   that carries one) moved to `$defs` once and referenced.
 * The server validates every call with the tool's zod schema regardless:
 * the published schema tells a client what to send, it is not the check.
 */

type Json = unknown;
type JsonObject = Record<string, Json>;

const SAFE_INT = 9007199254740991;
const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
/** Sub-schemas shorter than this stay inline: a `$ref` would cost about as much. */
const MIN_SHARED_CHARS = 160;

/** Keys whose values are data, not schemas: never shared, never rewritten. */
const DATA_KEYS = new Set(['default', 'const', 'examples', 'enum']);

const isObject = (v: Json): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function trim(node: Json): Json {
  if (Array.isArray(node)) return node.map(trim);
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYS.has(key)) {
      out[key] = value;
      continue;
    }
    if (key === 'maximum' && value === SAFE_INT) continue;
    if (key === 'minimum' && value === -SAFE_INT) continue;
    if (key === 'pattern' && value === UUID_PATTERN) {
      out.format = 'uuid';
      continue;
    }
    out[key] = trim(value);
  }
  return out;
}

/** Moves sub-schemas that occur more than once into `$defs`, largest first. */
function share(root: JsonObject): JsonObject {
  const defs: JsonObject = isObject(root.$defs) ? { ...root.$defs } : {};
  const counts = new Map<string, number>();
  const visit = (node: Json, depth: number): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n, depth + 1));
    if (!isObject(node)) return;
    if (depth > 0) {
      const text = JSON.stringify(node);
      if (text.length >= MIN_SHARED_CHARS) counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYS.has(key)) continue;
      // `properties` maps names to schemas: the map itself is not a schema.
      if (key === 'properties' && isObject(value))
        Object.values(value).forEach((v) => visit(v, depth + 1));
      else visit(value, depth + 1);
    }
  };
  visit(root, 0);
  const repeated = [...counts.entries()]
    .filter(([, n]) => n > 1)
    .sort((a, b) => b[0].length - a[0].length);
  if (repeated.length === 0) return root;
  const names = new Map<string, string>();
  let next = 0;
  const replace = (node: Json, depth: number): Json => {
    if (Array.isArray(node)) return node.map((n) => replace(n, depth + 1));
    if (!isObject(node)) return node;
    if (depth > 0) {
      const text = JSON.stringify(node);
      if (counts.get(text)! > 1 && repeated.some(([t]) => t === text)) {
        let name = names.get(text);
        if (!name) {
          name = `shared${next++}`;
          names.set(text, name);
          defs[name] = replaceChildren(node, depth);
        }
        return { $ref: `#/$defs/${name}` };
      }
    }
    return replaceChildren(node, depth);
  };
  const replaceChildren = (node: JsonObject, depth: number): JsonObject => {
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs' && depth === 0) continue;
      if (DATA_KEYS.has(key)) out[key] = value;
      else if (key === 'properties' && isObject(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [k, replace(v, depth + 1)]),
        );
      } else out[key] = replace(value, depth + 1);
    }
    return out;
  };
  const body = replaceChildren(root, 0);
  // Definitions that were there before may hold repeated parts too.
  for (const [name, value] of Object.entries(defs))
    if (!name.startsWith('shared'))
      defs[name] = isObject(value) ? replaceChildren(value, 1) : value;
  return { ...body, $defs: defs };
}

export function leanSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return share(trim(schema) as JsonObject);
}
