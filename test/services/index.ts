import { describe, it } from 'vitest';
import * as postgres from './postgres.js';
import * as redis from './redis.js';

const SERVICES = { postgres, redis };
type Service = keyof typeof SERVICES;

/** `describe` when every named service answers; otherwise failing tests saying how to start them (or a skip). */
export async function describeWithServices(
  name: string,
  needs: Service[],
  body: () => void,
): Promise<void> {
  const problems: string[] = [];
  for (const s of needs) {
    const problem = await SERVICES[s].probe();
    if (problem !== null) problems.push(SERVICES[s].requiredMessage(problem));
  }
  if (problems.length === 0) describe(name, body);
  else if (
    process.env.AIRLOCK_TEST_SKIP_SERVICES === '1' ||
    process.env.AIRLOCK_TEST_SERVICES === 'none'
  )
    describe.skip(`${name}: ${problems.join(' ')}`, () => it('needs services', () => undefined));
  else
    describe(name, () => {
      for (const p of problems)
        it('required service is reachable', () => {
          throw new Error(p);
        });
    });
}
