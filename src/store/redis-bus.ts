/**
 * Redis pub/sub carrying events between `airlock serve` instances
 * (spec/kernel.md §9, scale-out). Each instance publishes to one channel and
 * delivers everything it receives from it, its own events included, so every
 * instance sees the same events in the same order Redis delivers them.
 */
import { Redis } from 'ioredis';
import type { AirlockEvent, BusTransport } from '../kernel/events.js';

export interface RedisBusOptions {
  url: string;
  channel?: string;
}

export function createRedisBusTransport({
  url,
  channel = 'airlock:events',
}: RedisBusOptions): BusTransport {
  const opts = { lazyConnect: true, maxRetriesPerRequest: 3 };
  const pub = new Redis(url, opts);
  const sub = new Redis(url, opts);
  return {
    async start(deliver) {
      await Promise.all([pub.connect(), sub.connect()]);
      sub.on('message', (ch: string, message: string) => {
        if (ch !== channel) return;
        try {
          deliver(JSON.parse(message) as AirlockEvent);
        } catch {
          // A foreign or corrupt message on our channel is ignored.
        }
      });
      await sub.subscribe(channel);
    },
    async send(event) {
      await pub.publish(channel, JSON.stringify(event));
    },
    async close() {
      await Promise.allSettled([sub.quit(), pub.quit()]);
    },
  };
}
