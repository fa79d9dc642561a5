import { expect, it } from 'vitest';
import { createEventBus } from '../../src/kernel/events/events.js';
import { eventBusContract } from './event-bus-contract.js';

eventBusContract('in-process', (options) => createEventBus(options));

it('the in-process bus delivers synchronously, before publish returns', async () => {
  const bus = await createEventBus();
  const got: string[] = [];
  bus.subscribe((e) => got.push(e.data.event));
  bus.publish({ event: 'now' });
  expect(got).toEqual(['now']);
  await bus.close();
});
