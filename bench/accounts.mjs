/**
 * Which ledger account a bench write appends to. A ledger account keeps every
 * entry it was given, and an append reads and rewrites the whole account, so
 * an account written without bound makes each append cost more the longer a
 * run goes on (40,000 appends over 512 accounts: 250 → 580 µs of CPU per
 * write on SQLite) — a run's numbers would depend on its length and on the
 * parts before it, and the raw and bare baselines (a fresh row per write)
 * would not be like for like. Each account takes APPENDS_PER_ACCOUNT appends
 * from one writer, then the writer moves to a new one: every write of a run
 * has the same size, and the versioned update of an existing account is
 * still most of them.
 */
export const APPENDS_PER_ACCOUNT = 4;

/** The account of a writer's `n`th append (`n` counts that writer's appends from 0). */
export const accountFor = (writer, n) => `${writer}-${Math.floor(n / APPENDS_PER_ACCOUNT)}`;

/** A counter per writer: `next(writer)` is the account for its next append. */
export function accountCounter() {
  const counts = new Map();
  return (writer) => {
    const n = counts.get(writer) ?? 0;
    counts.set(writer, n + 1);
    return accountFor(writer, n);
  };
}
