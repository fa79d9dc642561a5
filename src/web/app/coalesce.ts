/**
 * Reloads that never show stale data: while one run is in flight, further
 * requests collapse into one more run that starts after it ends. A screen
 * that reloads on events and on its own buttons could otherwise render an
 * older response last (its request began before the change it missed).
 */
export function coalesced(run: () => Promise<void>): () => Promise<void> {
  let inFlight: Promise<void> | null = null;
  let again = false;
  const loop = async () => {
    try {
      do {
        again = false;
        await run();
      } while (again);
    } finally {
      inFlight = null;
    }
  };
  return () => {
    if (inFlight) {
      again = true;
      return inFlight;
    }
    inFlight = loop();
    return inFlight;
  };
}
