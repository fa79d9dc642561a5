/**
 * The SQLite store's change mark (kernel/store.ts `changeMark`): SQLite's
 * `data_version` on the writer connection, which moves whenever another
 * connection commits and never for the writer's own commits.
 *
 * Asking it opens a read transaction on the writer (the WAL-index read
 * locks: two `fcntl` calls, ~13 µs per call under load, where a request
 * asks once or twice). It cannot have moved unless somebody committed, and
 * every commit rewrites the WAL-index header at the start of the `-shm`
 * file — the header SQLite's own readers compare to know whether anything
 * was committed since they last looked (https://sqlite.org/walformat.html,
 * "The WAL-Index Header"). So the header's first copy (48 bytes, one
 * `pread`) is read first, and `data_version` asked only when it changed.
 * The header is read before `data_version`: a commit that lands between
 * the two changes the header again, and is asked about next time.
 *
 * The answer also stands for the rest of the current turn of the event
 * loop (a request asks it for the principals and for the policy); a commit
 * elsewhere during the turn is seen from the next one, as if it had landed
 * just after these calls.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** The WAL-index header's first copy: its size in bytes (walformat.html §2.2.1). */
const HEADER_BYTES = 48;

export interface ChangeMark {
  read(): number;
  close(): void;
}

export interface ChangeMarkSource {
  /** `PRAGMA data_version` on the writer connection. */
  dataVersion(): number;
  /** Fills `into` with the WAL-index header's bytes; false when it cannot be read (then `dataVersion` is asked every time). */
  readHeader(into: Buffer): boolean;
  close?(): void;
}

/** The header of the WAL-index file at `${path}-shm`, read with `pread` on a descriptor kept open. */
export function shmHeaderReader(path: string): Pick<ChangeMarkSource, 'readHeader' | 'close'> {
  let fd: number | null;
  try {
    fd = openSync(`${path}-shm`, 'r');
  } catch {
    fd = null; // no shared-memory file (another locking mode): always ask SQLite
  }
  return {
    readHeader(into) {
      if (fd === null) return false;
      try {
        return readSync(fd, into, 0, HEADER_BYTES, 0) === HEADER_BYTES;
      } catch {
        return false;
      }
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

export function createChangeMark(source: ChangeMarkSource): ChangeMark {
  const seen = Buffer.alloc(HEADER_BYTES);
  const now = Buffer.alloc(HEADER_BYTES);
  let version: number | null = null;
  let thisTurn: number | null = null;
  const forget = () => void (thisTurn = null);

  const fresh = (): number => {
    // Without a header to compare, SQLite is asked every time.
    if (!source.readHeader(now)) return source.dataVersion();
    if (version === null || !now.equals(seen)) {
      now.copy(seen);
      version = source.dataVersion();
    }
    return version;
  };

  return {
    read() {
      if (thisTurn === null) {
        thisTurn = fresh();
        setImmediate(forget);
      }
      return thisTurn;
    },
    close() {
      source.close?.();
    },
  };
}
