/**
 * Door `notes` (spec/notes.md). Not built yet: `available` stays false until it is,
 * so the workspace reports it as unavailable instead of mounting a stub.
 */
import type { DoorContext } from '../context.js';
import type { Door } from '../../kernel/door.js';

export const available = false;

export async function createNotesDoors(_ctx: DoorContext): Promise<Door[]> {
  throw new Error('the notes door is not built yet');
}
