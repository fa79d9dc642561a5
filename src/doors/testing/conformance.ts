/**
 * Test-only door `conformance` (spec/kernel.md §12): the fixture tools,
 * resources and prompts `@modelcontextprotocol/conformance` expects, served on
 * the same transport stack as the real doors.
 */
import type { Door } from '../../kernel/door.js';

export function createConformanceDoor(): Door {
  return { name: 'conformance', tools: [] };
}
