/**
 * The doors this build can mount, by name. Test-only doors (`conformance`,
 * `ledger`) are offered only when AIRLOCK_ENABLE_TEST_DOORS=1, and only then
 * loaded (by dynamic import), so a production server never loads their code;
 * every door's code is loaded when the door is mounted.
 */
import type { DoorFactory } from '../../doors/context.js';

// Each door's code is loaded when it is mounted: a server without the
// openapi or mcp door never loads theirs (start-up time).
const DOORS: Record<string, DoorFactory> = {
  scene: async (ctx) => (await import('../../doors/scene/index.js')).createSceneDoors(ctx),
  notes: async (ctx) => (await import('../../doors/notes/index.js')).createNotesDoors(ctx),
  openapi: async (ctx) => (await import('../../doors/openapi/index.js')).createOpenapiDoors(ctx),
  page: async (ctx) => (await import('../../doors/page/index.js')).createPageDoors(ctx),
  mcp: async (ctx) => (await import('../../doors/mcp/index.js')).createMcpDoors(ctx),
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
