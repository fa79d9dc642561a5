/** The page store the agent reaches: `get(path)`, `set(path, value)`, `keys()` with dot paths. */
export interface PageStore {
  get(path: string): unknown;
  set(path: string, value: unknown): void;
  keys(): string[];
}

const segments = (path: string) => (path === '' ? [] : path.split('.'));

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
        if (node === null || typeof node !== 'object') return undefined;
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
        const next = node[key];
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
