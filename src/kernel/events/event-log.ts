/**
 * The deployment's event log on the store (spec/kernel.md §9): the id space
 * every instance on one store shares, bounded to the newest `retain` events
 * (older ones are pruned as new ones are appended; a `Last-Event-ID` older
 * than what is kept gets a snapshot instead of a replay).
 */
import type { EventLog } from './logged-bus.js';
import type { Store } from '../store.js';

export const EVENT_LOG_RETAIN = 10_000;
export interface StoreEventLogOptions {
  /** How many of the newest events are kept (default 10,000). */
  retain?: number;
  /** Pruning runs when an append crosses a multiple of this id (default 256). */
  pruneEvery?: number;
}

export function storeEventLog(
  store: Store,
  { retain = EVENT_LOG_RETAIN, pruneEvery = 256 }: StoreEventLogOptions = {},
): EventLog {
  return {
    append(entries) {
      return store.transaction(async (tx) => {
        const rows = await tx.events.append(entries);
        const last = rows.at(-1)?.id ?? 0;
        const first = rows[0]?.id ?? 0;
        if (Math.floor(last / pruneEvery) !== Math.floor((first - 1) / pruneEvery))
          await tx.events.prune(last - retain);
        return rows;
      });
    },
    read(afterId, limit) {
      return store.read(async (tx) => {
        const [events, bounds] = await Promise.all([
          tx.events.after(afterId, limit),
          tx.events.bounds(),
        ]);
        return { events, ...bounds };
      });
    },
    retained: retain,
  };
}
