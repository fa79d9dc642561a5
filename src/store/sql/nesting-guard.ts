import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Rejects a transaction started from inside another transaction of the same
 * store. On SQLite it would wait for the writer lock its caller holds, on
 * PostgreSQL it could wait for a row lock its caller holds: either way it
 * would hang instead of failing. Work that outlives its transaction (a
 * detached promise) may start a new one once the first has ended.
 */
export function createNestingGuard(): <T>(work: () => Promise<T>) => Promise<T> {
  const current = new AsyncLocalStorage<{ open: boolean }>();
  // On Node 20 an enabled AsyncLocalStorage turns on async hooks for the whole
  // process: every promise anywhere (a read's whole tools/call) pays an init
  // hook. It is enabled only while a transaction is open; `run` enables it
  // again. A context left from an earlier transaction holds `open: false`.
  let open = 0;
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (current.getStore()?.open) {
      throw new Error(
        'store.transaction was called inside a transaction of the same store; use the outer tx instead.',
      );
    }
    const state = { open: true };
    open += 1;
    try {
      return await current.run(state, work);
    } finally {
      state.open = false;
      open -= 1;
      if (open === 0) current.disable();
    }
  };
}
