/** Waiting for a condition instead of sleeping a fixed time. */

export interface WaitOptions {
  /** How long to keep trying (default 5 s). */
  timeoutMs?: number;
  /** How often to check (default 20 ms). */
  intervalMs?: number;
  /** What was awaited, for the timeout error. */
  message?: string;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves as soon as `predicate` returns true (it may be async); rejects
 * with `message` and the time waited when it has not within `timeoutMs`.
 * A predicate that throws fails the wait at once.
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  { timeoutMs = 5_000, intervalMs = 20, message = 'condition' }: WaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message}`);
    await pause(intervalMs);
  }
}

/**
 * Waits until `read()` (a growing output, e.g. a child's stdout) matches
 * `pattern`, and returns the match; the timeout error shows the output's tail.
 */
export async function waitForOutput(
  read: () => string,
  pattern: RegExp,
  options: Omit<WaitOptions, 'message'> = {},
): Promise<RegExpExecArray> {
  let match: RegExpExecArray | null = null;
  try {
    await waitFor(() => (match = pattern.exec(read())) !== null, {
      ...options,
      message: String(pattern),
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; output so far:\n${read().slice(-2000)}`, {
      cause: error,
    });
  }
  return match!;
}

/**
 * For asserting that something does NOT happen: checks `predicate` every
 * `intervalMs` for `durationMs` and rejects the first time it is false.
 * A bounded wait is the only way to observe an absence, so `durationMs`
 * should be a little longer than the time the unwanted thing would take.
 */
export async function holdsFor(
  predicate: () => boolean | Promise<boolean>,
  durationMs: number,
  { intervalMs = 20, message = 'condition' }: Omit<WaitOptions, 'timeoutMs'> = {},
): Promise<void> {
  const end = Date.now() + durationMs;
  for (;;) {
    if (!(await predicate())) throw new Error(`${message} stopped holding before ${durationMs} ms`);
    if (Date.now() >= end) return;
    await pause(intervalMs);
  }
}
