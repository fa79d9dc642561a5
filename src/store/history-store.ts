/**
 * A shared `HistoryLog` in the store (spec/kernel.md §7; issue 15 item 6):
 * every instance on the store appends to one log, so they build one history
 * with one epoch counter. Three record collections, keyed by the log's name:
 * `history.head` (`{epoch, snapshotEpoch, at}`: the last logged epoch),
 * `history.entry` (`<name>/<epoch, 12 digits>`: one entry each) and
 * `history.snapshot`. An append is one keyed transaction that locks the head
 * and adds the entry only when its epoch is the next one; otherwise it fails
 * with a `HistoryConflict` and the history catches up and tries again. A
 * compaction writes the snapshot and drops the entries it covers; an
 * instance behind it gets the snapshot from `since`.
 */
import {
  HistoryConflict,
  type HistoryLog,
  type HistorySnapshot,
  type LogEntry,
} from '../kernel/writes/history.js';
import type { Store, StoreTx } from '../kernel/store.js';

const HEAD = 'history.head';
const ENTRY = 'history.entry';
const SNAPSHOT = 'history.snapshot';

interface Head {
  epoch: number;
  snapshotEpoch: number;
  /** When the last entry was logged (ms since the epoch). */
  at: number;
}

const entryKey = (name: string, epoch: number) => `${name}/${String(epoch).padStart(12, '0')}`;

/** A history log others can append to too; `changedAt` is when the newest change seen was logged. */
export interface StoreHistoryLog<S, Op> extends HistoryLog<S, Op> {
  close(): void;
  changedAt(): number | null;
}

export function createStoreHistoryLog<S, Op>(
  store: Store,
  name: string,
  now: () => number = Date.now,
): StoreHistoryLog<S, Op> {
  let changedAt: number | null = null;

  const entriesAfter = async (tx: StoreTx, epoch: number) =>
    (await tx.records.list<LogEntry<Op>>(ENTRY, { prefix: `${name}/` }))
      .map((r) => r.value)
      .filter((e) => e.epoch > epoch)
      .sort((a, b) => a.epoch - b.epoch);

  const readAfter = (epoch: number | null) =>
    store.read(async (tx) => {
      const head = (await tx.records.get<Head>(HEAD, name))?.value ?? null;
      if (head) changedAt = head.at;
      // Nothing new: one read by key, the common case before every request.
      if (epoch !== null && (head?.epoch ?? 0) === epoch) return { snapshot: null, entries: [] };
      const behind = epoch === null || (head?.snapshotEpoch ?? 0) > epoch;
      const snapshot = behind
        ? ((await tx.records.get<HistorySnapshot<S, Op>>(SNAPSHOT, name))?.value ?? null)
        : null;
      return { snapshot, entries: await entriesAfter(tx, snapshot?.epoch ?? epoch ?? 0) };
    });

  return {
    load: () => readAfter(null),
    since: (epoch) => readAfter(epoch),
    async append(entry) {
      const at = now();
      await store.transaction(
        async (tx) => {
          const head = (await tx.records.get<Head>(HEAD, name))?.value;
          if (entry.epoch !== (head?.epoch ?? 0) + 1) throw new HistoryConflict(entry.epoch);
          await tx.records.put(ENTRY, entryKey(name, entry.epoch), entry);
          await tx.records.put(HEAD, name, {
            epoch: entry.epoch,
            snapshotEpoch: head?.snapshotEpoch ?? 0,
            at,
          });
        },
        { isolation: 'keyed' },
      );
      changedAt = at;
    },
    async compact(snapshot) {
      await store.transaction(async (tx) => {
        const head = (await tx.records.get<Head>(HEAD, name))?.value;
        // Another instance compacted as far or further already.
        if (head && snapshot.epoch <= head.snapshotEpoch) return;
        await tx.records.put(SNAPSHOT, name, snapshot);
        for (const entry of await tx.records.list<LogEntry<Op>>(ENTRY, { prefix: `${name}/` }))
          if (entry.value.epoch <= snapshot.epoch) await tx.records.delete(ENTRY, entry.key);
        await tx.records.put(HEAD, name, {
          epoch: Math.max(head?.epoch ?? 0, snapshot.epoch),
          snapshotEpoch: snapshot.epoch,
          at: head?.at ?? now(),
        });
      });
    },
    changedAt: () => changedAt,
    close() {
      // Nothing held open: every call is its own transaction.
    },
  };
}

/** Removes the log `name` from the store: its head, its entries and its snapshot, in one transaction. */
export async function removeStoreHistoryLog(store: Store, name: string): Promise<void> {
  await store.transaction(async (tx) => {
    for (const { key } of await tx.records.list(ENTRY, { prefix: `${name}/` }))
      await tx.records.delete(ENTRY, key);
    await tx.records.delete(SNAPSHOT, name);
    await tx.records.delete(HEAD, name);
  });
}
