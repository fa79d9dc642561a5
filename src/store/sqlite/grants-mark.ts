/**
 * The grants mark (store.ts `grantsMark`) of the SQLite store: a number that
 * moves whenever grants may have changed, so the kernel can keep an agent's
 * active grants between calls instead of reading them on every write
 * (issue 31) without ever honouring a revoked one.
 *
 * While a write transaction of this store that touched `tx.grants` is under
 * way it is null (nobody caches what might be changing); it moves once that
 * transaction has ended — committed or rolled back — and whenever the
 * store's change mark moves (another process or store object on the file
 * committed anything).
 */
export interface GrantsMark {
  /** One write transaction's part: `touch` on its first use of `tx.grants`, `end` once it ended. */
  watch(): { touch(): void; end(): void };
  /** The mark, or null: read the grants (a change under way, or the store cannot tell). */
  read(): number | null;
}

export function createGrantsMark(changeMark: () => number | null): GrantsMark {
  let epoch = 0;
  let changing = 0;
  let seen: number | null = null;
  return {
    watch() {
      let touched = false;
      return {
        touch() {
          if (touched) return;
          touched = true;
          changing += 1;
        },
        end() {
          if (!touched) return;
          touched = false;
          changing -= 1;
          epoch += 1;
        },
      };
    },
    read() {
      const mark = changeMark();
      if (mark === null || changing > 0) return null;
      if (mark !== seen) {
        seen = mark;
        epoch += 1;
      }
      return epoch;
    },
  };
}
