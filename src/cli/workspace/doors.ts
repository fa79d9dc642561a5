/**
 * The doors this build can mount, by name. Test-only doors (`conformance`,
 * `ledger`) are offered only when AIRLOCK_ENABLE_TEST_DOORS=1, and only then
 * loaded (by dynamic import), so a production server never loads their code.
 */
import type { DoorFactory } from '../../doors/context.js';
import { createSceneDoors } from '../../doors/scene/index.js';
import { createNotesDoors } from '../../doors/notes/index.js';
import { createOpenapiDoors } from '../../doors/openapi/index.js';
import { createPageDoors } from '../../doors/page/index.js';
import { createMcpDoors } from '../../doors/mcp/index.js';

const DOORS: Record<string, DoorFactory> = {
  scene: createSceneDoors,
  notes: createNotesDoors,
  openapi: createOpenapiDoors,
  page: createPageDoors,
  mcp: createMcpDoors,
};

const TEST_DOORS: Record<string, DoorFactory> = {
  ledger: async () => [(await import('../../doors/testing/ledger.js')).createLedgerDoor()],
  conformance: async () => [
    (await import('../../doors/testing/conformance.js')).createConformanceDoor(),
  ],
};

export const DEFAULT_DOORS = ['scene', 'notes', 'page'];

const testDoorsEnabled = () => process.env.AIRLOCK_ENABLE_TEST_DOORS === '1';

export function availableDoors(): string[] {
  return [...Object.keys(DOORS), ...(testDoorsEnabled() ? Object.keys(TEST_DOORS) : [])];
}

export function doorFactory(name: string): DoorFactory | undefined {
  return DOORS[name] ?? (testDoorsEnabled() ? TEST_DOORS[name] : undefined);
}
