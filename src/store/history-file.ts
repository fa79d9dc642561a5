/**
 * A `HistoryLog` in a folder (spec/kernel.md §7), shared by every process
 * that opens the folder (issue 36 item 4): `oplog.jsonl`, one entry a line,
 * appended and fsynced before the change is acknowledged; and
 * `snapshot.json`, written to a temp file, fsynced and renamed, after which
 * the log is rewritten without the entries it covers.
 *
 * Appends and compactions take the folder's lock, `oplog.lock`: an SQLite
 * file held in an exclusive transaction, so the operating system releases it
 * when its process dies (SIGKILL included). Under the lock an append states
 * its epoch: one that is not the next answers a `HistoryConflict`, and the
 * history catches up (`since`) and makes its change again on the newer
 * state, so every process builds one history with one epoch counter. A
 * compaction covers only what its maker read: a snapshot behind the log's
 * last entry is not written. A lock held longer than `lockWaitMs` (10 s)
 * answers `unavailable`.
 *
 * Readers take no lock: a torn last line (an append in flight, or a crash
 * mid-append) is skipped, and cut by the next append under the lock. On
 * load, entries at or below the snapshot's epoch are skipped (a crash
 * between snapshot and rewrite loses nothing).
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
  existsSync,
  ftruncateSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AirlockError } from '../kernel/errors.js';
import {
  HistoryConflict,
  type HistoryLog,
  type HistorySnapshot,
  type LogEntry,
} from '../kernel/writes/history.js';

export const OPLOG_LOCK = 'oplog.lock';

export interface FileHistoryLogOptions {
  /** How long an append waits for another process's lock before `unavailable` (default 10 s). */
  lockWaitMs?: number;
}

export type FileHistoryLog<S, Op> = HistoryLog<S, Op> &
  Required<Pick<HistoryLog<S, Op>, 'since'>> & {
    close(): void;
    changedAt(): number | null;
  };

interface ReadLog<Op> {
  entries: LogEntry<Op>[];
  /** Bytes of whole lines (what a torn tail is cut back to). */
  good: number;
  size: number;
  /** The last entry is whole but misses its newline. */
  newline: boolean;
}

function readLog<Op>(path: string): ReadLog<Op> {
  if (!existsSync(path)) return { entries: [], good: 0, size: 0, newline: false };
  const text = readFileSync(path);
  const entries: LogEntry<Op>[] = [];
  let good = 0;
  let start = 0;
  for (let nl = text.indexOf(10, start); nl !== -1; nl = text.indexOf(10, start)) {
    const line = text.subarray(start, nl).toString('utf8');
    if (line.trim()) {
      try {
        entries.push(JSON.parse(line) as LogEntry<Op>);
      } catch {
        break; // a broken line: nothing after it was acknowledged
      }
    }
    start = nl + 1;
    good = start;
  }
  // A last line without its newline: whole (kept; the next append adds the
  // newline), or torn by a crash or an append in flight (skipped).
  const tail = text.subarray(start).toString('utf8');
  if (good === start && tail.trim()) {
    try {
      entries.push(JSON.parse(tail) as LogEntry<Op>);
      return { entries, good: text.length, size: text.length, newline: true };
    } catch {
      // torn
    }
  }
  return { entries, good, size: text.length, newline: false };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A path as Node's fs writes it: a lone surrogate becomes U+FFFD (fs encodes
 * it so; better-sqlite3 would not, and could not open a file in a folder fs
 * made for a name holding one).
 */
const wellFormed = (path: string) =>
  path.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/**
 * The folder's lock: an exclusive transaction on `oplog.lock`, which the OS
 * releases when the process dies. `run` waits up to `lockWaitMs` for it.
 */
function folderLock(dir: string, lockWaitMs: number) {
  let db: Database.Database | null = null;
  return {
    async run<T>(fn: () => T): Promise<T> {
      // A folder deleted while its project was open (DELETE /projects/…): a clear answer, not SQLite's.
      if (!db && !existsSync(dir))
        throw new AirlockError(
          'notFound',
          `The project's folder ${dir} is gone (it was deleted while open); open or create the project again.`,
        );
      db ??= new Database(wellFormed(join(dir, OPLOG_LOCK)), { timeout: 0 });
      const held = db;
      const deadline = Date.now() + lockWaitMs;
      for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
        try {
          held.exec('BEGIN EXCLUSIVE');
          break;
        } catch (error) {
          if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
          if (Date.now() >= deadline)
            throw new AirlockError(
              'unavailable',
              `The project's history at ${dir} has been locked by another Airlock process for over ${Math.round(lockWaitMs / 1000)} s; retry the change.`,
            );
          await sleep(wait);
        }
      }
      try {
        return fn();
      } finally {
        held.exec('COMMIT');
      }
    },
    close() {
      db?.close();
      db = null;
    },
  };
}

export function createFileHistoryLog<S, Op>(
  dir: string,
  options: FileHistoryLogOptions = {},
): FileHistoryLog<S, Op> {
  mkdirSync(dir, { recursive: true });
  const lockWaitMs = options.lockWaitMs ?? 10_000;
  const logPath = join(dir, 'oplog.jsonl');
  const snapPath = join(dir, 'snapshot.json');
  const lock = folderLock(dir, lockWaitMs);
  const locked = lock.run;
  /** What this process last saw of the files: a read when nothing changed is two stats. */
  let seen: { log: string; snap: string } | null = null;
  let changedAt: number | null = null;

  const stamp = (path: string) => {
    try {
      const s = statSync(path);
      changedAt = Math.max(changedAt ?? 0, s.mtimeMs);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return '-';
    }
  };
  const fsyncDir = () => {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  };
  const readSnapshot = () =>
    existsSync(snapPath)
      ? (JSON.parse(readFileSync(snapPath, 'utf8')) as HistorySnapshot<S, Op>)
      : null;

  /**
   * The snapshot (when newer than `epoch`) and the entries after it. The log is
   * read before the snapshot: a compaction in between gives a newer snapshot
   * and an older log, whose covered entries are skipped. A gap means a
   * compaction and appends slipped between the two reads: read again.
   */
  const readAfter = (epoch: number | null) => {
    for (let attempt = 0; ; attempt++) {
      const stamps = { log: stamp(logPath), snap: stamp(snapPath) };
      if (epoch !== null && seen && seen.log === stamps.log && seen.snap === stamps.snap)
        return { snapshot: null, entries: [] };
      const { entries } = readLog<Op>(logPath);
      const snapshot = readSnapshot();
      const base = Math.max(snapshot?.epoch ?? 0, epoch ?? 0);
      const after = entries.filter((e) => e.epoch > base);
      const takeSnapshot = snapshot !== null && (epoch === null || snapshot.epoch > epoch);
      if (after.length === 0 || after[0]!.epoch === base + 1 || attempt >= 5) {
        seen = stamps;
        return { snapshot: takeSnapshot ? snapshot : null, entries: after };
      }
    }
  };

  /** Cuts a torn tail (under the lock: no append is in flight) and answers the last epoch. */
  const headUnderLock = () => {
    const read = readLog<Op>(logPath);
    if (read.newline) {
      const f = openSync(logPath, 'a');
      try {
        writeSync(f, '\n');
        fsyncSync(f);
      } finally {
        closeSync(f);
      }
    } else if (read.good < read.size) {
      const f = openSync(logPath, 'r+');
      try {
        ftruncateSync(f, read.good);
        fsyncSync(f);
      } finally {
        closeSync(f);
      }
    }
    const snapEpoch = existsSync(snapPath) ? (readSnapshot()?.epoch ?? 0) : 0;
    return { read, last: Math.max(snapEpoch, read.entries.at(-1)?.epoch ?? 0), snapEpoch };
  };

  return {
    load: async () => readAfter(null),
    since: async (epoch) => readAfter(epoch),
    append: (entry) =>
      locked(() => {
        const { last } = headUnderLock();
        if (entry.epoch !== last + 1) throw new HistoryConflict(entry.epoch);
        const f = openSync(logPath, 'a');
        try {
          writeSync(f, JSON.stringify(entry) + '\n');
          fsyncSync(f);
        } finally {
          closeSync(f);
        }
        changedAt = Date.now();
      }),
    compact: async (snapshot) => {
      // A project whose folder is gone has nothing to keep a snapshot of.
      if (!existsSync(dir)) return;
      return locked(() => {
        const { read, last, snapEpoch } = headUnderLock();
        // Only what its maker read: a snapshot behind the log (or an older one) is not written.
        if (snapshot.epoch < last || (existsSync(snapPath) && snapshot.epoch <= snapEpoch)) return;
        const tmp = `${snapPath}.tmp`;
        const t = openSync(tmp, 'w');
        try {
          writeSync(t, JSON.stringify(snapshot));
          fsyncSync(t);
        } finally {
          closeSync(t);
        }
        renameSync(tmp, snapPath);
        fsyncDir();
        // Every entry is covered (the snapshot is at or past the last one): empty the log.
        if (read.entries.length > 0) {
          const f = openSync(logPath, 'r+');
          try {
            ftruncateSync(f, 0);
            fsyncSync(f);
          } finally {
            closeSync(f);
          }
        }
      });
    },
    changedAt: () => changedAt,
    close: lock.close,
  };
}

/** Removes the folder's `oplog.jsonl`, `snapshot.json`, a snapshot temp file and the lock file. */
export function removeFileHistoryLog(dir: string): void {
  for (const file of ['oplog.jsonl', 'snapshot.json', 'snapshot.json.tmp', OPLOG_LOCK])
    rmSync(join(dir, file), { force: true });
}
