/**
 * `airlock serve --run-as USER` (issue 25 §4): started as root, the server
 * makes the data folder USER's (0700, its files 0600), binds, and then
 * drops to USER with `process.setgid`/`setuid` — so the account the agents
 * run under cannot read the owner's store, and nothing of Airlock is
 * reachable to it except over HTTP/stdio.
 */
import { execFileSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  lstatSync,
  mkdirSync,
  readdirSync,
} from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../args.js';

export interface RunAs {
  user: string;
  uid: number;
  gid: number;
}

/** USER's uid and primary gid (`id`), checked before anything starts. */
export function resolveRunAs(user: string): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0)
    throw new UsageError(
      `--run-as ${user}: start airlock serve as root (it binds, then drops to ${user}); or start it as ${user} without --run-as`,
    );
  const id = (flag: string) => {
    try {
      return Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
    } catch {
      throw new UsageError(`--run-as: no user '${user}' on this system`);
    }
  };
  const uid = id('-u');
  const gid = id('-g');
  if (uid === 0) throw new UsageError('--run-as: give an unprivileged user, not root');
  return { user, uid, gid };
}

/** Creates `data` (0700) for the user before the store is opened. */
export function prepareDataFolder(data: string, who: RunAs): void {
  mkdirSync(data, { recursive: true, mode: 0o700 });
  chownSync(data, who.uid, who.gid);
  chmodSync(data, 0o700);
}

/** Gives everything in `data` to the user: folders 0700, files 0600 (symlinks untouched). */
function giveTree(path: string, who: RunAs): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  chownSync(path, who.uid, who.gid);
  if (stat.isDirectory()) {
    chmodSync(path, 0o700);
    for (const entry of readdirSync(path)) giveTree(join(path, entry), who);
  } else chmodSync(path, 0o600);
}

/** After binding: the data folder becomes the user's, then the process becomes the user. */
export function dropPrivileges(data: string, who: RunAs): void {
  giveTree(data, who);
  // POSIX only; resolveRunAs already required root on such a system.
  process.setgroups?.([who.gid]);
  process.setgid?.(who.gid);
  process.setuid?.(who.uid);
  try {
    accessSync(data, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch {
    throw new Error(
      `${who.user} cannot reach ${data}: every folder above it must be searchable by ${who.user} (e.g. not under a 0700 /tmp); choose another --data`,
    );
  }
}
