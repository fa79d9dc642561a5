/** `--bus redis://…` selects the Redis event transport; anything else is a usage error. */
import type { BusTransport } from '../../kernel/events/events.js';
import { UsageError } from '../args.js';

export async function createBusTransport(
  spec: string,
  options: { channel?: string; onError?: (error: Error) => void } = {},
): Promise<BusTransport> {
  if (/^rediss?:\/\//.test(spec)) {
    // ioredis is loaded only when a bus is named (start-up time).
    const { createRedisBusTransport } = await import('../../store/redis-bus.js');
    return createRedisBusTransport({ url: spec, ...options });
  }
  throw new UsageError(`--bus must be a redis:// or rediss:// URL, got '${spec}'`);
}
