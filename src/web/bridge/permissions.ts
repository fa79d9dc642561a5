/**
 * The page's permission flags (spec/page.md "Bridge"). Defaults: only
 * executeActions, readStore and emitEvents are on. Every route checks them
 * in the bridge, including the API handed to action handlers.
 */
import { denied } from './errors.js';

export const PERMISSION_FLAGS = [
  'executeActions',
  'readStore',
  'writeStore',
  'emitEvents',
  'readDOM',
  'modifyDOM',
  'readDiagnostics',
] as const;

export type PermissionFlag = (typeof PERMISSION_FLAGS)[number];
export type Permissions = Record<PermissionFlag, boolean>;

export const DEFAULT_PERMISSIONS: Readonly<Permissions> = Object.freeze({
  executeActions: true,
  readStore: true,
  writeStore: false,
  emitEvents: true,
  readDOM: false,
  modifyDOM: false,
  readDiagnostics: false,
});

const WHAT: Record<PermissionFlag, string> = {
  executeActions: 'running actions',
  readStore: 'reading the store',
  writeStore: 'writing the store',
  emitEvents: 'emitting events',
  readDOM: 'reading the page (snapshot, screenshot)',
  modifyDOM: 'changing the page (click, type, mount)',
  readDiagnostics: 'reading diagnostics (events, console, network)',
};

let current: Permissions = { ...DEFAULT_PERMISSIONS };

export function isPermissionFlag(name: unknown): name is PermissionFlag {
  return typeof name === 'string' && (PERMISSION_FLAGS as readonly string[]).includes(name);
}

/** Turns flags on or off; unknown names are ignored. Returns the flags now in force. */
export function setPermissions(flags: Partial<Permissions>): Permissions {
  const next = { ...current };
  for (const [k, v] of Object.entries(flags)) if (isPermissionFlag(k)) next[k] = v === true;
  current = next;
  return { ...current };
}

export function getPermissions(): Permissions {
  return { ...current };
}

export function resetPermissions(): void {
  current = { ...DEFAULT_PERMISSIONS };
}

/** Throws WU_PERMISSION_DENIED unless `flag` is on. */
export function requirePermission(flag: PermissionFlag): void {
  if (!current[flag]) throw denied(flag, WHAT[flag]);
}
