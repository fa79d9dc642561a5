/**
 * Stage 2, limits (spec/kernel.md §3): request bytes, calls in flight per
 * connection (the extra call is refused at once, never queued), and response
 * bytes. The per-call timeout lives in the pipeline's execute step.
 */
import { failure, type Failure } from '../errors.js';
import { utf8Bytes } from '../digest.js';
import { checkNesting, MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

export function checkRequestBytes(args: unknown, max: number): Failure | null {
  // Measuring serialises, which would overflow the stack on arguments nested
  // thousands deep: those are refused first, as validate would (authority.md §4).
  const tooDeep = checkNesting(args);
  if (tooDeep) return tooDeep;
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

/**
 * A result nested past the JSON cap (an upstream API's or a page's answer)
 * cannot be serialised safely, so it is refused before it is measured.
 */
export function checkResultNesting(value: unknown): Failure | null {
  if (!nestsDeeperThan(value)) return null;
  return failure(
    'resultTooLarge',
    `The result nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays and cannot be returned; narrow the request or ask for another representation.`,
    { maxDepth: MAX_JSON_DEPTH },
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

/**
 * The token budget of a read (`Limits.resultTokens`): refused, never cut,
 * with a sentence saying how to ask for less.
 */
export function checkResultTokens(serialised: string, maxTokens: number): Failure | null {
  const tokens = Math.ceil(serialised.length / 2);
  if (tokens <= maxTokens) return null;
  return failure(
    'resultTooLarge',
    `The result would be about ${tokens} tokens; at most ${maxTokens} are returned at once. Narrow the call: ask for fewer items, pages or fields, or follow the tool's cursor.`,
    { tokens, maxTokens },
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
