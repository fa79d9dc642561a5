/** Against prism serving the Petstore documents: every GET operation succeeds with the describe example. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  catalogOf,
  fixture,
  mountDoor,
  startPrism,
  type MountedDoor,
  type Prism,
} from './helpers.js';

for (const doc of ['petstore.yaml', 'petstore-expanded.yaml', 'real-petstore.json']) {
  describe(`prism ${doc}`, () => {
    let prism: Prism;
    let door: MountedDoor;
    beforeAll(async () => {
      prism = await startPrism(fixture(doc));
      door = await mountDoor(await catalogOf(doc), {
        prefix: 'pets',
        baseUrl: prism.url,
        env: { PETS_API_KEY: 'special-key', PETS_PETSTORE_AUTH: 'oauth-token' },
      });
    }, 90_000);
    afterAll(async () => {
      await door?.close();
      await prism?.close();
    });

    it('_call succeeds for every GET operation with the example from _describe', async () => {
      const catalog = await catalogOf(doc);
      const gets = catalog.resources.flatMap((r) =>
        r.methods.filter((m) => m.http === 'GET').map((m) => [r.path, m.name] as const),
      );
      expect(gets.length).toBeGreaterThan(0);
      for (const [resource, method] of gets) {
        const described = await door.call('describe', { resource, method });
        expect(described.isError).toBe(false);
        const example = described.structured!.example as Record<string, unknown>;
        const result = await door.call('call', example);
        expect(result.isError, `${resource}.${method}: ${result.text}`).toBe(false);
      }
    });
  });
}
