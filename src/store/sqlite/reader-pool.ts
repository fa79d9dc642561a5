/**
 * A few read-only connections, opened on demand. A reader is one
 * transaction at a time, so concurrent `read` calls each get their own
 * connection (or wait for one) instead of interleaving on a shared one.
 */
export interface ReaderPool<R> {
  use<T>(work: (reader: R) => Promise<T>): Promise<T>;
  /** Waits for readers in use, then closes them all. */
  close(): Promise<void>;
}

export function createReaderPool<R>(
  open: () => R,
  dispose: (reader: R) => void,
  size: number,
): ReaderPool<R> {
  const idle: R[] = [];
  const waiting: Array<(reader: R) => void> = [];
  let opened = 0;
  let pending = 0;
  let drained: (() => void) | undefined;

  const acquire = async (): Promise<R> => {
    const reader = idle.pop();
    if (reader !== undefined) return reader;
    if (opened < size) {
      const fresh = open();
      opened += 1;
      return fresh;
    }
    return new Promise<R>((resolve) => waiting.push(resolve));
  };

  const release = (reader: R): void => {
    const next = waiting.shift();
    if (next) next(reader);
    else idle.push(reader);
  };

  return {
    async use(work) {
      pending += 1;
      try {
        const reader = await acquire();
        try {
          return await work(reader);
        } finally {
          release(reader);
        }
      } finally {
        pending -= 1;
        if (pending === 0) drained?.();
      }
    },

    async close() {
      if (pending > 0) await new Promise<void>((resolve) => (drained = resolve));
      for (const reader of idle.splice(0)) dispose(reader);
    },
  };
}
