/**
 * Stage 2, limits (spec/kernel.md §3): request bytes, calls in flight per
 * connection (the extra call is refused at once, never queued), and response
 * bytes. The per-call timeout lives in the pipeline's execute step.
 */
import { failure, type Failure } from './errors.js';
import { utf8Bytes } from './digest.js';

export function checkRequestBytes(args: unknown, max: number): Failure | null {
  const bytes = utf8Bytes(JSON.stringify(args ?? {}));
  if (bytes <= max) return null;
  return failure(
    'requestTooLarge',
    `The arguments are ${bytes} bytes; at most ${max} are accepted. Send less per call.`,
    {
      bytes,
      max,
    },
  );
}

export function checkResponseBytes(serialised: string, max: number): Failure | null {
  const bytes = utf8Bytes(serialised);
  if (bytes <= max) return null;
  return failure(
    'resultTooLarge',
    `The result would be ${bytes} bytes; at most ${max} can be returned. Narrow the request.`,
    {
      bytes,
      max,
    },
  );
}

/** Counts calls in flight per connection key. */
export interface ConcurrencyGate {
  /** A release function, or null when `max` calls are already in flight. */
  enter(key: string, max: number): (() => void) | null;
  inFlight(key: string): number;
}

export function createConcurrencyGate(): ConcurrencyGate {
  const counts = new Map<string, number>();
  return {
    enter(key, max) {
      const n = counts.get(key) ?? 0;
      if (n >= max) return null;
      counts.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (counts.get(key) ?? 1) - 1;
        if (left <= 0) counts.delete(key);
        else counts.set(key, left);
      };
    },
    inFlight: (key) => counts.get(key) ?? 0,
  };
}
