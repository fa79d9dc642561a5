/**
 * A HistoryLog kept in memory (src/ has only the file one): for tests that
 * want a history which "reopens" without a folder. It passes the same
 * contract as the file log (test/kernel/history-log-memory.test.ts) and
 * copies what it keeps, as persisting would.
 */
import type { HistoryLog, HistorySnapshot, LogEntry } from '../../src/kernel/writes/history.js';

export function memoryHistoryStorage<S, Op>(): { open(): HistoryLog<S, Op> } {
  let snapshot: HistorySnapshot<S, Op> | null = null;
  let entries: LogEntry<Op>[] = [];
  return {
    open: () => ({
      async load() {
        return structuredClone({ snapshot, entries });
      },
      async append(entry) {
        entries.push(structuredClone(entry));
      },
      async compact(next) {
        snapshot = structuredClone(next);
        entries = [];
      },
    }),
  };
}
