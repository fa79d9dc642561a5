/**
 * Door `openapi` (spec/openapi.md). Not built yet: `available` stays false until it is,
 * so the workspace reports it as unavailable instead of mounting a stub.
 */
import type { DoorContext } from '../context.js';
import type { Door } from '../../kernel/door.js';

export const available = false;

export async function createOpenapiDoors(_ctx: DoorContext): Promise<Door[]> {
  throw new Error('the openapi door is not built yet');
}
