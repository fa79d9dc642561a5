/**
 * A connection's active grants, kept between its calls while the store's
 * grants mark (store.ts `grantsMark`) stands: a journaled write asks for
 * its grant on every call, and on the embedded store that read was a tenth
 * of a write's CPU (issue 31). A revoke, an approval, an ended connection or
 * agent, or another process's commit moves the mark, and the next call reads
 * again; a grant that expired since it was read is not returned. A store that
 * cannot tell (no mark, or a grant change under way) is read every time.
 */
import type { Grant } from '../records.js';
import { ONE_STATEMENT, type Store } from '../store.js';

/** Connections whose grants are kept at most; past it the cache starts over. */
export const GRANT_CACHE_CONNECTIONS = 10_000;

export interface GrantCache {
  /** The connection's grants active at `at` (read from the store, or kept since). */
  active(connection: string, at: number): Promise<Grant[]>;
}

export function createGrantCache(store: Store): GrantCache {
  const kept = new Map<string, Grant[]>();
  let keptMark: number | null = null;
  return {
    async active(connection, at) {
      const mark = store.grantsMark?.() ?? null;
      if (mark !== null && mark === keptMark) {
        const grants = kept.get(connection);
        if (grants) return grants.filter((g) => g.expiresAt > at);
      }
      const grants = await store.read((tx) => tx.grants.listActive(at, connection), ONE_STATEMENT);
      // Kept under the mark taken before the read: a change since has moved it.
      if (mark !== null) {
        if (keptMark !== mark || kept.size >= GRANT_CACHE_CONNECTIONS) kept.clear();
        keptMark = mark;
        kept.set(connection, grants);
      }
      return grants;
    },
  };
}
