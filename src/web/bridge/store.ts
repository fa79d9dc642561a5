/** The page store the agent reaches: `get(path)`, `set(path, value)`, `keys()` with dot paths. */
export interface PageStore {
  get(path: string): unknown;
  set(path: string, value: unknown): void;
  keys(): string[];
}

/**
 * Path segments that would reach an object's prototype instead of its own
 * data (`__proto__.polluted` once made `({}).polluted` true in the page).
 */
export const FORBIDDEN_SEGMENTS = ['__proto__', 'constructor', 'prototype'];

/** The forbidden segment a dot path contains, or null. */
export function forbiddenSegment(path: string): string | null {
  return path.split('.').find((s) => FORBIDDEN_SEGMENTS.includes(s)) ?? null;
}

const segments = (path: string) => {
  const bad = forbiddenSegment(path);
  if (bad !== null) throw new Error(`the path segment '${bad}' is not allowed`);
  return path === '' ? [] : path.split('.');
};

/**
 * A plain in-memory store over a JSON object.
 *
 * @example
 * const store = createStore({ user: { name: 'Ada' } });
 * store.set('user.name', 'Grace');
 */
export function createStore(initial: Record<string, unknown> = {}): PageStore {
  const root: Record<string, unknown> = initial;
  return {
    get(path) {
      let node: unknown = root;
      for (const key of segments(path)) {
        // Own data only: an inherited member is not the page's state.
        if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key))
          return undefined;
        node = (node as Record<string, unknown>)[key];
      }
      return node;
    },
    set(path, value) {
      const keys = segments(path);
      const last = keys.pop();
      if (last === undefined) throw new Error('the path must not be empty');
      let node: Record<string, unknown> = root;
      for (const key of keys) {
        const next = Object.hasOwn(node, key) ? node[key] : undefined;
        if (next === null || typeof next !== 'object') node[key] = {};
        node = node[key] as Record<string, unknown>;
      }
      node[last] = value;
    },
    keys: () => Object.keys(root),
  };
}

let current: PageStore = createStore();

export function useStore(store: PageStore | Record<string, unknown>): PageStore {
  const s = store as PageStore;
  current =
    typeof s.get === 'function' && typeof s.set === 'function' && typeof s.keys === 'function'
      ? s
      : createStore(store as Record<string, unknown>);
  return current;
}

export const pageStore = (): PageStore => current;
