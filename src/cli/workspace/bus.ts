/** `--bus redis://…` selects the Redis event transport; anything else is a usage error. */
import type { BusTransport } from '../../kernel/events/events.js';
import { createRedisBusTransport } from '../../store/redis-bus.js';
import { UsageError } from '../args.js';

export async function createBusTransport(
  spec: string,
  options: { channel?: string; onError?: (error: Error) => void } = {},
): Promise<BusTransport> {
  if (/^rediss?:\/\//.test(spec)) return createRedisBusTransport({ url: spec, ...options });
  throw new UsageError(`--bus must be a redis:// or rediss:// URL, got '${spec}'`);
}
