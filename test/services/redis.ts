import { Redis } from 'ioredis';
import { describe, it } from 'vitest';

/** The test Redis; override with AIRLOCK_TEST_REDIS_URL. */
export const REDIS_URL = process.env.AIRLOCK_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** `npm run test:fast` sets AIRLOCK_TEST_SERVICES=none: the suites needing a service skip even when it answers. */
const UNUSED = process.env.AIRLOCK_TEST_SERVICES === 'none';
const SKIP = process.env.AIRLOCK_TEST_SKIP_SERVICES === '1' || UNUSED;

export function requiredMessage(cause: string): string {
  return (
    `Redis is required at ${REDIS_URL} for these tests (${cause}). Start it with ` +
    '`redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`, ' +
    'point AIRLOCK_TEST_REDIS_URL at another server, or set AIRLOCK_TEST_SKIP_SERVICES=1 to skip them.'
  );
}

export async function probe(): Promise<string | null> {
  if (UNUSED) return 'not used in this lane: AIRLOCK_TEST_SERVICES=none';
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    client.disconnect();
  }
}

/** `describe` when Redis answers; otherwise a failing test saying how to start it (or a skip). */
export async function describeWithRedis(name: string, body: () => void): Promise<void> {
  const problem = await probe();
  if (problem === null) describe(name, body);
  else if (SKIP)
    describe.skip(`${name}: ${requiredMessage(problem)}`, () => it('needs Redis', () => undefined));
  else
    describe(name, () => {
      it('Redis is reachable', () => {
        throw new Error(requiredMessage(problem));
      });
    });
}
