/**
 * The catalog as the tools use it: resources by path, methods by name, a
 * derived `iterate` beside every paginated `list`, signatures, and "did you
 * mean" suggestions for unknown names.
 */
import type { Catalog, CatalogMethod, CatalogResource } from './catalog.js';

export interface MethodEntry extends CatalogMethod {
  /** `iterate`: collects `list` across pages. */
  readonly iterates: boolean;
}

export interface ResourceEntry {
  readonly path: string;
  readonly methods: ReadonlyMap<string, MethodEntry>;
  /** Lower-cased text a query is matched against: path, method names, summaries. */
  readonly haystack: string;
}

export interface CatalogIndex {
  readonly catalog: Catalog;
  readonly resources: readonly ResourceEntry[];
  resource(path: string): ResourceEntry | undefined;
}

export function indexCatalog(catalog: Catalog): CatalogIndex {
  const resources = catalog.resources.map(indexResource);
  const byPath = new Map(resources.map((r) => [r.path, r]));
  return { catalog, resources, resource: (path) => byPath.get(path) };
}

function indexResource(resource: CatalogResource): ResourceEntry {
  const methods = new Map<string, MethodEntry>();
  for (const m of resource.methods) {
    methods.set(m.name, { ...m, iterates: false });
    if (m.name === 'list' && m.pagination && !resource.methods.some((x) => x.name === 'iterate'))
      methods.set('iterate', { ...m, name: 'iterate', iterates: true });
  }
  const haystack = [resource.path, ...[...methods.values()].flatMap((m) => [m.name, m.summary])]
    .join(' ')
    .toLowerCase();
  return { path: resource.path, methods, haystack };
}

/** `list(slug, project, params?)`. */
export function signature(m: MethodEntry): string {
  const args = m.pathIds.map((p) => p.name);
  if (m.body) args.push(m.body.required ? 'data' : 'data?');
  if (m.params.length > 0) args.push(m.params.some((p) => p.required) ? 'params' : 'params?');
  if (m.iterates) args.push('limit?');
  return `${m.name}(${args.join(', ')})`;
}

/** `list(slug, project, params?) [read] — List cycles`. */
export const signatureLine = (m: MethodEntry) => `${signature(m)} [${m.kind}] — ${m.summary}`;

/** Words of a query that all occur in the resource (a trailing plural `s` is optional). */
export function matches(resource: ResourceEntry, query: string): boolean {
  const words = query
    .toLowerCase()
    .split(/[\s,.;:/]+/)
    .filter(Boolean);
  return words.every(
    (w) =>
      resource.haystack.includes(w) ||
      (w.length > 3 && w.endsWith('s') && resource.haystack.includes(w.slice(0, -1))),
  );
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** Up to five known names closest to `name` (substring matches first). */
export function didYouMean(name: string, known: Iterable<string>): string[] {
  const n = name.toLowerCase();
  return [...known]
    .map((k) => {
      const l = k.toLowerCase();
      const score =
        l.includes(n) || n.includes(l) ? 0 : distance(n, l) / Math.max(n.length, l.length);
      return { k, score };
    })
    .filter((x) => x.score <= 0.5)
    .sort((a, b) => a.score - b.score || (a.k < b.k ? -1 : 1))
    .slice(0, 5)
    .map((x) => x.k);
}
