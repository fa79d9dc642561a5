/**
 * Resource paths and method names (spec/openapi.md "The catalog").
 *
 * Resources are the static path segments without a leading version prefix,
 * camelCased and joined by dots: `/api/v1/workspaces/{slug}/work-items/{id}/`
 * → `workspaces.workItems`. Methods: collection GET `list`, POST `create`;
 * item GET `retrieve`, PATCH `update`, PUT `update` (`replace` beside a
 * PATCH), DELETE `delete`; a trailing action segment is its own method
 * (`…/{id}/archive` POST → `archive`). Collisions fall back to the
 * operationId, for every operation in the collision, so the outcome does not
 * depend on document order.
 */

export type Segment = { static: string } | { param: string[] };

/** `work-items` → `workItems`, `widget.json` → `widgetJson`, `@me` → `me`, `task_gid` → `taskGid`. */
export function camelCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words
    .map((w, i) =>
      i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1),
    )
    .join('');
  if (joined === '') return '_';
  return /^[0-9]/.test(joined) ? `_${joined}` : joined;
}

const pascal = (text: string) => {
  const c = camelCase(text);
  return c.charAt(0).toUpperCase() + c.slice(1);
};

export function segmentsOf(path: string): Segment[] {
  return path
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      const params = [...s.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      return params.length > 0 ? { param: params } : { static: s };
    });
}

const VERSION = /^(api|rest|v\d+(\.\d+)*|\d+(\.\d+)+)$/i;

/** Drops leading `api`, `rest`, `v1`, `1.0`… segments. */
export function withoutVersionPrefix(segments: Segment[]): Segment[] {
  let i = 0;
  while (i < segments.length) {
    const s = segments[i]!;
    if (!('static' in s) || !VERSION.test(s.static)) break;
    i++;
  }
  return segments.slice(i);
}

export interface NamingInput {
  path: string;
  /** Upper-case HTTP method. */
  http: string;
  operationId?: string | undefined;
}

export interface Naming {
  resource: string;
  method: string;
}

const staticsOf = (segments: Segment[]) =>
  segments.flatMap((s) => ('static' in s ? [camelCase(s.static)] : []));

const COLLECTION: Record<string, string> = {
  GET: 'list',
  POST: 'create',
  PUT: 'replace',
  PATCH: 'update',
  DELETE: 'bulkDelete',
};
const ITEM: Record<string, string> = {
  GET: 'retrieve',
  PATCH: 'update',
  PUT: 'update',
  DELETE: 'delete',
};

const key = (n: NamingInput) => `${n.http} ${n.path}`;

/** Names every operation; the result is keyed by `"<HTTP> <path>"`. */
export function nameOperations(ops: readonly NamingInput[]): Map<string, Naming> {
  const byPath = new Map<string, Set<string>>();
  for (const op of ops) {
    const set = byPath.get(op.path) ?? new Set<string>();
    set.add(op.http);
    byPath.set(op.path, set);
  }
  const paths = [...byPath.keys()];
  const normalised = new Map(paths.map((p) => [p, p.replace(/\/+$/, '')]));
  const hasChildren = (path: string) => {
    const prefix = `${normalised.get(path)}/`;
    return paths.some((p) => p !== path && (normalised.get(p) ?? p).startsWith(prefix));
  };

  const proposed = new Map<string, Naming>();
  for (const op of ops) {
    const segments = withoutVersionPrefix(segmentsOf(op.path));
    const last = segments[segments.length - 1];
    const methods = byPath.get(op.path)!;
    const statics = staticsOf(segments);
    const previous = segments[segments.length - 2];
    const isAction =
      last !== undefined &&
      'static' in last &&
      statics.length > 1 &&
      !methods.has('GET') &&
      !hasChildren(op.path) &&
      ((previous !== undefined && 'param' in previous) || [...methods].every((m) => m === 'POST'));
    let resource: string;
    let method: string | undefined;
    if (isAction) {
      resource = statics.slice(0, -1).join('.');
      method =
        op.http === 'POST'
          ? camelCase(last.static)
          : `${op.http.toLowerCase()}${pascal(last.static)}`;
    } else {
      resource = statics.length > 0 ? statics.join('.') : 'root';
      const item = last !== undefined && 'param' in last;
      if (item && op.http === 'PUT' && methods.has('PATCH')) method = 'replace';
      else method = (item ? ITEM : COLLECTION)[op.http];
    }
    proposed.set(key(op), { resource, method: method ?? fallbackName(op) });
  }

  // Collisions: every operation in a collision takes its operationId instead.
  const groups = new Map<string, NamingInput[]>();
  for (const op of ops) {
    const n = proposed.get(key(op))!;
    const k = `${n.resource} ${n.method}`;
    groups.set(k, [...(groups.get(k) ?? []), op]);
  }
  const result = new Map<string, Naming>();
  const taken = new Set<string>();
  const sorted = [...ops].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  for (const op of sorted) {
    const n = proposed.get(key(op))!;
    if (groups.get(`${n.resource} ${n.method}`)!.length === 1) {
      result.set(key(op), n);
      taken.add(`${n.resource} ${n.method}`);
    }
  }
  for (const op of sorted) {
    if (result.has(key(op))) continue;
    const { resource } = proposed.get(key(op))!;
    let method = fallbackName(op);
    if (taken.has(`${resource} ${method}`)) method = `${method}${pascal(op.http.toLowerCase())}`;
    for (let i = 2; taken.has(`${resource} ${method}`); i++) method = `${fallbackName(op)}${i}`;
    taken.add(`${resource} ${method}`);
    result.set(key(op), { resource, method });
  }
  return result;
}

/** The operationId camelCased, or `<method><LastStaticSegment>` without one. */
function fallbackName(op: NamingInput): string {
  if (op.operationId && /[A-Za-z0-9]/.test(op.operationId)) return camelCase(op.operationId);
  const statics = staticsOf(segmentsOf(op.path));
  return `${op.http.toLowerCase()}${pascal(statics[statics.length - 1] ?? 'root')}`;
}

/** `project_id` → `project`, `projectId` → `project`, `task_gid` → `taskGid`; `id` stays. */
export function pathIdName(original: string): string {
  const stripped = original.replace(/(?:_id|Id|-id)$/, '');
  return camelCase(stripped === '' ? original : stripped);
}

const DESTRUCTIVE = ['delete', 'bulkDelete', 'remove', 'unlink'];

/**
 * `read` for GET/HEAD; `destructive` for DELETE and for methods named (or
 * starting with) delete, bulkDelete, remove, unlink; else `write`.
 */
export function kindOf(http: string, method: string): 'read' | 'write' | 'destructive' {
  if (http === 'DELETE') return 'destructive';
  if (
    DESTRUCTIVE.some(
      (d) => method === d || (method.startsWith(d) && /^[A-Z0-9]/.test(method.slice(d.length))),
    )
  )
    return 'destructive';
  if (http === 'GET' || http === 'HEAD') return 'read';
  return 'write';
}
