/**
 * 2025-era MCP sessions kept in the store (issue 15 item 5), so a session
 * opened on one `airlock serve` instance continues on any other: the agent
 * it belongs to, the `initialize` request that opened it (replayed to
 * rebuild the SDK's session on another instance) and when it was last used.
 * Its grants already live in the store under the session's connection id.
 */
import { z } from 'zod';
import type { Store } from '../../kernel/store.js';

const COLLECTION = 'mcp-session';

export const StoredSessionSchema = z.object({
  agent: z.string(),
  /** The JSON-RPC `initialize` request, as the client sent it. */
  init: z.record(z.string(), z.unknown()),
  createdAt: z.number(),
  lastSeen: z.number(),
});
export type StoredSession = z.infer<typeof StoredSessionSchema>;

export interface SessionRecords {
  save(id: string, session: StoredSession): Promise<void>;
  /** The session, or null when unknown (or unreadable). */
  load(id: string): Promise<StoredSession | null>;
  /** Records a use; a session unknown to the store stays unknown. */
  touch(id: string, at: number): Promise<void>;
  remove(id: string): Promise<void>;
  /** Every stored session, by id (unreadable ones left out). */
  list(): Promise<Map<string, StoredSession>>;
}

/** At most this many stored sessions are read per sweep (every instance's cap is 1000). */
const LISTED = 100_000;

export function sessionRecords(store: Store): SessionRecords {
  return {
    save: (id, session) => store.transaction((tx) => tx.records.put(COLLECTION, id, session)),
    async load(id) {
      const found = await store.read((tx) => tx.records.get(COLLECTION, id));
      const parsed = StoredSessionSchema.safeParse(found?.value);
      return parsed.success ? parsed.data : null;
    },
    touch: (id, at) =>
      store.transaction(async (tx) => {
        const found = StoredSessionSchema.safeParse((await tx.records.get(COLLECTION, id))?.value);
        if (found.success) await tx.records.put(COLLECTION, id, { ...found.data, lastSeen: at });
      }),
    async remove(id) {
      await store.transaction((tx) => tx.records.delete(COLLECTION, id));
    },
    async list() {
      const found = await store.read((tx) => tx.records.list(COLLECTION, { limit: LISTED }));
      const out = new Map<string, StoredSession>();
      for (const r of found) {
        const parsed = StoredSessionSchema.safeParse(r.value);
        if (parsed.success) out.set(r.key, parsed.data);
      }
      return out;
    },
  };
}
