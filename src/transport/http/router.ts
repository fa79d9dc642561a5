/** A tiny path router for REST routes with `{param}` segments. */
import type { RestRoute } from '../surface.js';

export interface Match {
  route: RestRoute;
  params: Record<string, string>;
}

export interface Router {
  add(route: RestRoute): void;
  /** `methodAllowed` false when the path exists for another method. */
  match(method: string, path: string): Match | { route: null; pathExists: boolean };
  routes(): RestRoute[];
}

const split = (p: string) => p.split('/').filter(Boolean);

export function createRouter(): Router {
  const table: { route: RestRoute; parts: string[] }[] = [];
  const matchParts = (parts: string[], segs: string[]) => {
    if (parts.length !== segs.length) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      const s = segs[i]!;
      if (p.startsWith('{') && p.endsWith('}')) {
        try {
          params[p.slice(1, -1)] = decodeURIComponent(s);
        } catch {
          return null;
        }
      } else if (p !== s) return null;
    }
    return params;
  };
  return {
    add(route) {
      const parts = split(route.path);
      if (table.some((t) => t.route.method === route.method && t.route.path === route.path)) {
        throw new Error(`REST route ${route.method} ${route.path} is declared twice`);
      }
      table.push({ route, parts });
      // Static segments win over parameters.
      table.sort(
        (a, b) =>
          a.parts.filter((p) => p.startsWith('{')).length -
          b.parts.filter((p) => p.startsWith('{')).length,
      );
    },
    match(method, path) {
      const segs = split(path);
      let pathExists = false;
      for (const t of table) {
        const params = matchParts(t.parts, segs);
        if (!params) continue;
        if (t.route.method === method) return { route: t.route, params };
        pathExists = true;
      }
      return { route: null, pathExists };
    },
    routes: () => table.map((t) => t.route),
  };
}
