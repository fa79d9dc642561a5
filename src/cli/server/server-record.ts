/**
 * `<data>/server.json`: the running server's address, so a process on the
 * same data folder (a spawned `airlock stdio`, the owner's CLI) can point
 * the owner at its inbox. Written when `serve` listens, removed when it
 * stops; a record whose process is gone (a crash) counts as no server.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SERVER_RECORD_FILE = 'server.json';

export interface ServerRecord {
  url: string;
  pid: number;
}

export function writeServerRecord(data: string, url: string): void {
  const record: ServerRecord = { url, pid: process.pid };
  writeFileSync(join(data, SERVER_RECORD_FILE), JSON.stringify(record) + '\n', { mode: 0o600 });
}

/** Removes the record if it is still this process's (another server may have taken the folder since). */
export function removeServerRecord(data: string): void {
  if (readServerRecord(data)?.pid === process.pid)
    rmSync(join(data, SERVER_RECORD_FILE), { force: true });
}

/** The server running on `data`, or null when none is (no record, a bad one, or its process is gone). */
export function readServerRecord(data: string): ServerRecord | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(data, SERVER_RECORD_FILE), 'utf8'));
  } catch {
    return null;
  }
  const r = parsed as Partial<ServerRecord>;
  if (typeof r?.url !== 'string' || typeof r.pid !== 'number' || !Number.isInteger(r.pid))
    return null;
  try {
    process.kill(r.pid, 0);
  } catch (error) {
    // EPERM: alive, but another user's (serve --run-as); ESRCH: gone.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  return { url: r.url, pid: r.pid };
}
