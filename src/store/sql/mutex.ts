/** Runs async work one at a time, in call order. */
export interface Mutex {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createMutex(): Mutex {
  let tail: Promise<unknown> = Promise.resolve();
  return {
    run<T>(work: () => Promise<T>): Promise<T> {
      const result = tail.then(work);
      tail = result.catch(() => undefined);
      return result;
    },
  };
}
