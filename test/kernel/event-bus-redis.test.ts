import { afterEach, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { createRedisBusTransport } from '../../src/store/redis-bus.js';
import { describeWithRedis, REDIS_URL } from '../services/redis.js';
import { waitFor } from '../helpers/wait.js';
import { eventBusContract } from './event-bus-contract.js';

const overRedis = (channel: string) =>
  createRedisBusTransport({ url: REDIS_URL, channel: `airlock:test:${channel}` });

await describeWithRedis('event bus over Redis', () => {
  // Each bus of the contract gets its own channel, so the suite's buses do not see each other.
  eventBusContract('Redis transport', (options) =>
    createEventBus({ ...options, transport: overRedis(randomUUID()) }),
  );

  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((b) => b.close()));
  });

  it('delivers an event published on one instance to every instance, the publisher included', async () => {
    const channel = randomUUID();
    const a = await createEventBus({ transport: overRedis(channel) });
    const b = await createEventBus({ transport: overRedis(channel) });
    buses.push(a, b);
    const got = { a: [] as unknown[], b: [] as unknown[] };
    a.subscribe((e) => got.a.push(e.data));
    b.subscribe((e) => got.b.push(e.data));
    a.publish({ event: 'jobStarted', id: 'j1', kind: 'k' });
    await waitFor(() => got.a.length >= 1 && got.b.length >= 1, {
      timeoutMs: 3000,
      message: 'the event on both instances',
    });
    expect(got.a).toEqual([{ event: 'jobStarted', id: 'j1', kind: 'k' }]);
    expect(got.b).toEqual([{ event: 'jobStarted', id: 'j1', kind: 'k' }]);
  });

  it('ignores foreign messages on the channel instead of crashing', async () => {
    const channel = randomUUID();
    const a = await createEventBus({ transport: overRedis(channel) });
    buses.push(a);
    const got: unknown[] = [];
    a.subscribe((e) => got.push(e.data));
    const { Redis } = await import('ioredis');
    const raw = new Redis(REDIS_URL);
    await raw.publish(`airlock:test:${channel}`, 'not json');
    await raw.quit();
    a.publish({ event: 'after' });
    await waitFor(() => got.length >= 1, { timeoutMs: 3000, message: 'the event after' });
    expect(got).toEqual([{ event: 'after' }]);
  });
});
