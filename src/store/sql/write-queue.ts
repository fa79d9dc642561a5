/**
 * The queue behind group commit (sqlite/group-writer.ts,
 * postgres/group-writer.ts): write transactions wait in order, and one loop
 * hands them to `runGroup` at most `maxGroup` at a time; writes that arrive
 * while a group runs form the next. Each write's function keeps its
 * caller's async context. `runGroup` answers every write of its group.
 */
import { AsyncResource } from 'node:async_hooks';
import type { StoreTx } from '../../kernel/store.js';

export interface PendingWrite {
  fn: (tx: StoreTx) => Promise<unknown>;
  /** The caller's async context: its function runs there, not in the loop's. */
  context: AsyncResource;
  /** Called when its transaction first uses `tx.grants` (SqlClient.touchingGrants). */
  touchingGrants?: (() => void) | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export type WriteOutcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface WriteQueue {
  run<T>(fn: (tx: StoreTx) => Promise<T>, touchingGrants?: () => void): Promise<T>;
  /** Resolves once every write queued so far has been answered. */
  drained(): Promise<void>;
}

/**
 * `parallel`: how many groups may run at once (PostgreSQL runs groups on
 * several connections; SQLite has one writer). A second loop starts only
 * when `spillAt` writes wait: while one group keeps up, bigger groups cost
 * less per write than more of them. Each loop takes the next group as soon
 * as its own one is answered.
 */
export function createWriteQueue(
  maxGroup: number,
  runGroup: (group: PendingWrite[]) => Promise<void>,
  parallel = 1,
  spillAt = maxGroup,
): WriteQueue {
  const queue: PendingWrite[] = [];
  const loops = new Set<Promise<void>>();

  const loop = async (): Promise<void> => {
    while (queue.length > 0) await runGroup(queue.splice(0, maxGroup));
  };
  const start = (): void => {
    if (loops.size >= parallel || (loops.size > 0 && queue.length < spillAt)) return;
    const running: Promise<void> = loop().finally(() => loops.delete(running));
    loops.add(running);
  };

  return {
    run<T>(fn: (tx: StoreTx) => Promise<T>, touchingGrants?: () => void): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({
          fn,
          context: new AsyncResource('airlock.store.write'),
          touchingGrants,
          resolve: resolve as (value: unknown) => void,
          reject,
        });
        start();
      });
    },
    async drained() {
      while (loops.size > 0) await Promise.all(loops);
    },
  };
}
