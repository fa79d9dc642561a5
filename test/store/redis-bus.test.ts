import { afterEach, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createEventBus, type EventBus } from '../../src/kernel/events.js';
import { createRedisBusTransport } from '../../src/store/redis-bus.js';
import { describeWithRedis, REDIS_URL } from '../services/redis.js';

const buses: EventBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.close()));
});

await describeWithRedis('Redis event transport', () => {
  it('delivers an event published on one instance to every instance, the publisher included', async () => {
    const channel = `airlock:test:${randomUUID()}`;
    const a = await createEventBus({
      transport: createRedisBusTransport({ url: REDIS_URL, channel }),
    });
    const b = await createEventBus({
      transport: createRedisBusTransport({ url: REDIS_URL, channel }),
    });
    buses.push(a, b);
    const got = { a: [] as unknown[], b: [] as unknown[] };
    a.subscribe((e) => got.a.push(e.data));
    b.subscribe((e) => got.b.push(e.data));
    a.publish({ event: 'jobStarted', id: 'j1', kind: 'k' });
    const deadline = Date.now() + 3000;
    while ((got.a.length < 1 || got.b.length < 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(got.a).toEqual([{ event: 'jobStarted', id: 'j1', kind: 'k' }]);
    expect(got.b).toEqual([{ event: 'jobStarted', id: 'j1', kind: 'k' }]);
  });

  it('ignores foreign messages on the channel instead of crashing', async () => {
    const channel = `airlock:test:${randomUUID()}`;
    const a = await createEventBus({
      transport: createRedisBusTransport({ url: REDIS_URL, channel }),
    });
    buses.push(a);
    const got: unknown[] = [];
    a.subscribe((e) => got.push(e.data));
    const { Redis } = await import('ioredis');
    const raw = new Redis(REDIS_URL);
    await raw.publish(channel, 'not json');
    await raw.quit();
    a.publish({ event: 'after' });
    const deadline = Date.now() + 3000;
    while (got.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([{ event: 'after' }]);
  });
});
