/** What an agent's event stream (`GET /api/v1/events`) may carry (sse.ts `visibleToAgent`). */
import { expect, it } from 'vitest';
import { visibleToAgent } from '../../src/transport/sse.js';

it('an agent’s stream carries taskChanged for its own MCP tasks only', () => {
  const change = (agent: string) => ({
    event: 'taskChanged',
    taskId: 't-1',
    agent,
    status: 'completed',
  });
  expect(visibleToAgent('alice')(change('alice'))).toBe(true);
  expect(visibleToAgent('alice')(change('bob'))).toBe(false);
});
