/**
 * The doors this build can mount, by name. Test-only doors (`conformance`,
 * `ledger`) are offered only when AIRLOCK_ENABLE_TEST_DOORS=1.
 */
import type { Door } from '../kernel/door.js';
import { createLedgerDoor } from '../doors/testing/ledger.js';
import { createConformanceDoor } from '../doors/testing/conformance.js';

export interface DoorContext {
  data: string;
}

type DoorFactory = (ctx: DoorContext) => Promise<Door[]> | Door[];

const TEST_DOORS: Record<string, DoorFactory> = {
  ledger: () => [createLedgerDoor()],
  conformance: () => [createConformanceDoor()],
};

/** Real doors register here as they are built (issues #3–#6). */
const DOORS: Record<string, DoorFactory> = {};

export const DEFAULT_DOORS = ['scene', 'notes', 'page'];

export function availableDoors(): string[] {
  const names = Object.keys(DOORS);
  if (process.env.AIRLOCK_ENABLE_TEST_DOORS === '1') names.push(...Object.keys(TEST_DOORS));
  return names;
}

export function doorFactory(name: string): DoorFactory | undefined {
  if (DOORS[name]) return DOORS[name];
  if (process.env.AIRLOCK_ENABLE_TEST_DOORS === '1') return TEST_DOORS[name];
  return undefined;
}
