/**
 * A `HistoryLog` in a folder (spec/kernel.md §7): `oplog.jsonl`, one entry a
 * line, appended and fsynced before the apply is acknowledged; and
 * `snapshot.json`, written to a temp file, fsynced and renamed, after which
 * the log is truncated. On load, log entries at or below the snapshot's epoch
 * are skipped (a crash between snapshot and truncate loses nothing), and a
 * torn last line (crash mid-append) is ignored.
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
} from 'node:fs';
import { join } from 'node:path';
import type { HistoryLog, HistorySnapshot, LogEntry } from '../kernel/history.js';

export function createFileHistoryLog<S, Op>(dir: string): HistoryLog<S, Op> & { close(): void } {
  mkdirSync(dir, { recursive: true });
  const logPath = join(dir, 'oplog.jsonl');
  const snapPath = join(dir, 'snapshot.json');
  let fd: number | null = null;
  const logFd = () => (fd ??= openSync(logPath, 'a'));

  const fsyncDir = () => {
    const d = openSync(dir, 'r');
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  };

  return {
    async load() {
      const snapshot = existsSync(snapPath)
        ? (JSON.parse(readFileSync(snapPath, 'utf8')) as HistorySnapshot<S, Op>)
        : null;
      const entries: LogEntry<Op>[] = [];
      if (existsSync(logPath)) {
        const text = readFileSync(logPath, 'utf8');
        let good = 0;
        for (const line of text.split('\n')) {
          if (!line.trim()) {
            good += line.length + 1;
            continue;
          }
          try {
            entries.push(JSON.parse(line) as LogEntry<Op>);
            good += Buffer.byteLength(line) + 1;
          } catch {
            break; // torn tail from a crash mid-append: it was never acknowledged
          }
        }
        if (good > Buffer.byteLength(text)) {
          writeSync(logFd(), '\n'); // a whole last entry missing only its newline
        } else if (good < Buffer.byteLength(text)) {
          // Cut the torn tail so later appends do not hide behind it.
          const f = openSync(logPath, 'r+');
          ftruncateSync(f, good);
          fsyncSync(f);
          closeSync(f);
        }
      }
      return { snapshot, entries };
    },
    async append(entry) {
      const f = logFd();
      writeSync(f, JSON.stringify(entry) + '\n');
      fsyncSync(f);
    },
    async compact(snapshot) {
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
      const f = logFd();
      ftruncateSync(f, 0);
      fsyncSync(f);
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** Removes the folder's `oplog.jsonl` and `snapshot.json` (and a snapshot temp file). */
export function removeFileHistoryLog(dir: string): void {
  for (const file of ['oplog.jsonl', 'snapshot.json', 'snapshot.json.tmp'])
    rmSync(join(dir, file), { force: true });
}
