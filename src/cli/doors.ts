/**
 * The doors this build can mount, by name. A door module says whether it is
 * built (`available`); test-only doors (`conformance`, `ledger`) are offered
 * only when AIRLOCK_ENABLE_TEST_DOORS=1.
 */
import type { DoorFactory } from '../doors/context.js';
import { createLedgerDoor } from '../doors/testing/ledger.js';
import { createConformanceDoor } from '../doors/testing/conformance.js';
import * as scene from '../doors/scene/index.js';
import * as notes from '../doors/notes/index.js';
import * as openapi from '../doors/openapi/index.js';
import * as page from '../doors/page/index.js';

const TEST_DOORS: Record<string, DoorFactory> = {
  ledger: async () => [createLedgerDoor()],
  conformance: async () => [createConformanceDoor()],
};

const DOORS: Record<string, { available: boolean; factory: DoorFactory }> = {
  scene: { available: scene.available, factory: scene.createSceneDoors },
  notes: { available: notes.available, factory: notes.createNotesDoors },
  openapi: { available: openapi.available, factory: openapi.createOpenapiDoors },
  page: { available: page.available, factory: page.createPageDoors },
};

export const DEFAULT_DOORS = ['scene', 'notes', 'page'];

const testDoorsEnabled = () => process.env.AIRLOCK_ENABLE_TEST_DOORS === '1';

export function availableDoors(): string[] {
  const names = Object.entries(DOORS)
    .filter(([, d]) => d.available)
    .map(([n]) => n);
  if (testDoorsEnabled()) names.push(...Object.keys(TEST_DOORS));
  return names;
}

export function doorFactory(name: string): DoorFactory | undefined {
  const door = DOORS[name];
  if (door?.available) return door.factory;
  if (testDoorsEnabled()) return TEST_DOORS[name];
  return undefined;
}
