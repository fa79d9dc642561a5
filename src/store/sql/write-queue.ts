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

/**
 * Promise steps a gathering group waits before it starts: at 8 journaled
 * calls in flight, 8 steps were enough for all of them to share a group
 * (7.7 writes per group against 3.2 without); 16 leaves room.
 */
export const GATHER_STEPS = 16;

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
  gather = false,
): WriteQueue {
  const queue: PendingWrite[] = [];
  const loops = new Set<Promise<void>>();

  const loop = async (): Promise<void> => {
    while (queue.length > 0) await runGroup(queue.splice(0, maxGroup));
  };
  // Gathering: the writes of calls already under way reach the queue a few
  // promise steps after this one (their pipelines are promise chains), so a
  // group started GATHER_STEPS steps later holds them too (issue 31). Promise
  // steps, not a turn of the event loop: code that keeps the microtask queue
  // busy (a reader polling in a loop) would hold back a `setImmediate`.
  const gathered = async (): Promise<void> => {
    for (let i = 0; i < GATHER_STEPS; i++) await undefined;
    return loop();
  };
  const start = (): void => {
    if (loops.size >= parallel || (loops.size > 0 && queue.length < spillAt)) return;
    const running: Promise<void> = (gather ? gathered() : loop()).finally(() =>
      loops.delete(running),
    );
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
