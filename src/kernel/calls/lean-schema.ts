/**
 * Published JSON Schemas, lean (issue 17: a `tools/list` an agent can
 * afford). Input schemas keep the same constraints in fewer tokens:
 * - no `$schema`: MCP's default dialect is 2020-12 already (a tool that must
 *   declare it publishes its own `inputJsonSchema`);
 * - no ±2^53−1 bounds (zod writes them for every integer: JSON numbers
 *   beyond them are not integers a client can send anyway);
 * - a UUID written as `format: "uuid"` rather than its 80-character pattern;
 * - a property the tool accepts but does not advertise (`x-unpublished`: a
 *   PascalCase op tag, a field kept for compatibility and ignored) left out,
 *   its object left open so a call using it still validates;
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

function trim(json: Json): Json {
  if (Array.isArray(json)) return json.map(trim);
  if (!isObject(json)) return json;
  let node: JsonObject = json;
  const props = node.properties;
  if (isObject(props)) {
    // A property accepted but not advertised (`x-unpublished`) is left out; the object
    // stops being closed so a client-side check accepts a call that uses it.
    const entries = Object.entries(props);
    const kept = entries.filter(([, v]) => !(isObject(v) && v['x-unpublished'] === true));
    if (kept.length < entries.length) {
      const { additionalProperties: _closed, ...open } = node;
      node = { ...open, properties: Object.fromEntries(kept) };
    }
  }
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

/**
 * Objects deeper than `depth` (the root is 0, its properties 1, …; `$ref`s
 * followed) become `{type: "object"}` with their description; definitions
 * only used beneath the cut are dropped.
 */
function capDepth(root: JsonObject, depth: number): JsonObject {
  const defs = isObject(root.$defs) ? root.$defs : {};
  const drawn = new Map<string, Json>(); // `${name}@${level}` → the definition drawn there
  const first = new Map<string, Json>(); // name → as drawn where first reached
  const open = new Set<string>();
  const recursive = new Set<string>();
  const cut = (node: Json, level: number): Json => {
    if (Array.isArray(node)) return node.map((n) => cut(n, level));
    if (!isObject(node)) return node;
    if (level > depth && node.type === 'object') {
      const out: JsonObject = { type: 'object' };
      if (typeof node.description === 'string') out.description = node.description;
      return out;
    }
    const ref =
      typeof node.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1] : undefined;
    if (ref !== undefined && defs[ref] !== undefined) {
      // Inlined where reached (drawn for that level); a recursive one (a batch
      // of ops) stays a reference to the definition as first drawn.
      if (open.has(ref)) {
        recursive.add(ref);
        return node;
      }
      const key = `${ref}@${level}`;
      if (!drawn.has(key)) {
        open.add(ref);
        drawn.set(key, cut(defs[ref], level));
        open.delete(ref);
        if (!first.has(ref)) first.set(ref, drawn.get(key));
      }
      return drawn.get(key)!;
    }
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === '$defs') continue;
      if (DATA_KEYS.has(key)) out[key] = value;
      else if (key === 'properties' && isObject(value))
        out[key] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [k, cut(v, level + 1)]),
        );
      else out[key] = cut(value, level);
    }
    return out;
  };
  const body = cut(root, 0) as JsonObject;
  if (recursive.size === 0) return body;
  // A recursive definition is referenced everywhere, never inlined beside its own definition.
  const texts = new Map([...recursive].map((r) => [JSON.stringify(first.get(r)), r]));
  const refer = (node: Json, top: boolean): Json => {
    if (Array.isArray(node)) return node.map((n) => refer(n, false));
    if (!isObject(node)) return node;
    const name = top ? undefined : texts.get(JSON.stringify(node));
    if (name !== undefined) return { $ref: `#/$defs/${name}` };
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, DATA_KEYS.has(k) ? v : refer(v, false)]),
    );
  };
  return {
    ...(refer(body, true) as JsonObject),
    $defs: Object.fromEntries([...recursive].map((r) => [r, refer(first.get(r), true)])),
  };
}

const ANY_JSON_TYPE = ['string', 'number', 'boolean', 'object', 'array', 'null'];

/** The JSON types a schema's values can have, when the schema says (directly or through a union, const or enum). */
function typesOf(
  node: Json,
  defs: JsonObject,
  seen: Set<string> = new Set(),
): string[] | undefined {
  if (!isObject(node)) return undefined;
  if (typeof node.type === 'string') return [node.type];
  if (Array.isArray(node.type) && node.type.every((t) => typeof t === 'string'))
    return node.type as string[];
  const ref = typeof node.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(node.$ref)?.[1] : undefined;
  if (ref !== undefined) {
    if (seen.has(ref)) return undefined;
    return typesOf(defs[ref], defs, new Set([...seen, ref]));
  }
  const jsonType = (v: Json) =>
    v === null
      ? 'null'
      : Array.isArray(v)
        ? 'array'
        : typeof v === 'number'
          ? Number.isInteger(v)
            ? 'integer'
            : 'number'
          : typeof v;
  if ('const' in node) return [jsonType(node.const)];
  if (Array.isArray(node.enum)) return [...new Set(node.enum.map(jsonType))];
  const members = Array.isArray(node.anyOf)
    ? node.anyOf
    : Array.isArray(node.oneOf)
      ? node.oneOf
      : Array.isArray(node.allOf)
        ? node.allOf.slice(0, 1)
        : undefined;
  if (!members) return undefined;
  const all = new Set<string>();
  for (const m of members) {
    const t = typesOf(m, defs, seen);
    if (!t) return undefined;
    t.forEach((x) => all.add(x));
  }
  // An integer member inside a number union is a number.
  if (all.has('number')) all.delete('integer');
  return all.size > 0 ? [...all] : undefined;
}

/**
 * Every top-level property states its `type` (issue 36): simple clients
 * (the Inspector 0.x, LangChain's adapters) read a property without one as a
 * string, or flatten a bare `$ref`. A `$ref` or a union keeps its shape and
 * gains the sibling `type` it resolves to; nothing else changes, so the
 * constraints are the same.
 */
export function typeTopLevel(schema: Record<string, unknown>): Record<string, unknown> {
  const props = schema.properties;
  if (!isObject(props)) return schema;
  const defs = isObject(schema.$defs) ? schema.$defs : {};
  let changed = false;
  const typed = Object.fromEntries(
    Object.entries(props).map(([name, prop]) => {
      if (!isObject(prop) || prop.type !== undefined) return [name, prop];
      // A value of any JSON type (`{}` with at most a description) says so.
      const types =
        typesOf(prop, defs) ??
        (Object.keys(prop).every((k) => k === 'description' || k === 'title')
          ? ANY_JSON_TYPE
          : undefined);
      if (!types) return [name, prop];
      changed = true;
      return [name, { ...prop, type: types.length === 1 ? types[0] : types }];
    }),
  );
  return changed ? { ...schema, properties: typed } : schema;
}

/**
 * An input schema, lean: the same constraints (see the top of this file),
 * or, with `depth`, detailed only that many objects deep (ToolDef.schemaDepth).
 */
export function leanSchema(
  schema: Record<string, unknown>,
  depth?: number,
): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = trim(schema) as JsonObject;
  // A tool without arguments needs no `properties: {}` to say so.
  if (isObject(rest.properties) && Object.keys(rest.properties).length === 0)
    delete rest.properties;
  return typeTopLevel(share(depth === undefined ? rest : capDepth(rest, depth)));
}

/** Keys an output outline keeps: the shape, not the checks. */
const OUTLINE_KEYS = new Set([
  'type',
  'properties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'const',
  'description',
]);
/** How deep an output outline details objects; deeper ones are only typed. */
const OUTLINE_DEPTH = 0;

function outline(node: Json, depth: number): Json {
  if (Array.isArray(node)) return node.map((n) => outline(n, depth));
  if (!isObject(node)) return node;
  if (depth > OUTLINE_DEPTH && node.type !== undefined) return { type: node.type };
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    // `items: false` closes a tuple whose `prefixItems` the outline drops.
    if (!OUTLINE_KEYS.has(key) || (key === 'items' && typeof value === 'boolean')) continue;
    if (key === 'const' || key === 'description' || key === 'type') out[key] = value;
    else if ((key === 'properties' || key === '$defs') && isObject(value))
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, outline(v, key === '$defs' ? 1 : depth + 1)]),
      );
    else out[key] = outline(value, key === 'items' ? depth + 1 : depth);
  }
  return out;
}

/**
 * An output schema, as an outline: what a result holds (types and fields)
 * without the checks a client never acts on (required fields, formats,
 * patterns, bounds, enums, closed objects): its fields, each typed (what a
 * field holds is in the result itself and the tool's description). A
 * result that matches the full schema matches its outline, so the promise
 * `structuredContent` keeps is only looser, never broken.
 */
export function leanOutputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  const drawn = outline(trim(rest), 0) as JsonObject;
  // Definitions no longer referenced after the outline are dropped.
  if (isObject(drawn.$defs)) {
    const defs = drawn.$defs;
    const text = () => JSON.stringify({ ...drawn, $defs: undefined }) + JSON.stringify(defs);
    for (const name of Object.keys(defs))
      if (!text().includes(`"#/$defs/${name}"`)) delete defs[name];
    if (Object.keys(defs).length === 0) delete drawn.$defs;
  }
  return share(drawn);
}
