/** What an agent's event stream (`GET /api/v1/events`) may carry (sse.ts `agentView`). */
import { expect, it } from 'vitest';
import { agentView } from '../../src/transport/http/sse.js';

it('an agent’s stream carries taskChanged for its own MCP tasks only', () => {
  const change = (agent: string) => ({
    event: 'taskChanged',
    taskId: 't-1',
    agent,
    status: 'completed',
  });
  expect(agentView('alice')(change('alice'))).toEqual(change('alice'));
  expect(agentView('alice')(change('bob'))).toBeNull();
});

it('an agent’s stream carries its own jobs’ events in the seed’s shapes, and no other principal’s', () => {
  const view = agentView('alice');
  expect(view({ event: 'jobStarted', id: 'j1', kind: 'pipeline', agent: 'alice' })).toEqual({
    event: 'jobStarted',
    id: 'j1',
    kind: 'pipeline',
  });
  expect(view({ event: 'jobFinished', id: 'j1', status: 'completed', agent: 'alice' })).toEqual({
    event: 'jobFinished',
    id: 'j1',
    status: 'completed',
  });
  for (const event of ['jobStarted', 'jobProgress', 'jobWarning', 'jobFinished']) {
    expect(view({ event, id: 'j2', jobId: 'j2', agent: 'bob' })).toBeNull();
    // The owner's and Airlock's own jobs carry no agent.
    expect(view({ event, id: 'j3', jobId: 'j3' })).toBeNull();
  }
});

it('an agent’s stream carries scene epochs without their labels', () => {
  expect(
    agentView('alice')({ event: 'sceneChanged', epoch: 7, label: 'owner renames the villain' }),
  ).toEqual({ event: 'sceneChanged', epoch: 7 });
});

it('an event an agent’s stream does not name is the owner’s alone', () => {
  const view = agentView('alice');
  for (const event of [
    'auditRecorded',
    'policyChanged',
    'agentsChanged',
    'jobCancelRequested',
    'somethingAddedLater',
  ])
    expect(view({ event, agent: 'alice' })).toBeNull();
  expect(view({ event: 'toolsChanged', door: 'scene' })).toEqual({
    event: 'toolsChanged',
    door: 'scene',
  });
});
