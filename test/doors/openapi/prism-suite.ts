/**
 * Shared suite: against prism serving Asana and Discord (prism rejects any request that
 * violates the document): `_call` succeeds for a deterministic sample of
 * operations — GET, POST, PUT/PATCH and DELETE (with confirm) — whose
 * arguments are the example `_describe` gives.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Catalog } from '../../../src/doors/openapi/catalog.js';
import {
  catalogOf,
  fixture,
  mountDoor,
  startPrism,
  type MountedDoor,
  type Prism,
} from './helpers.js';

const ALL = process.env.OPENAPI_PRISM_ALL === '1';

/** Every operation whose name hashes into the sample (stable across runs and machines). */
function sample(names: string[], share: number): string[] {
  return names.filter((n) => ALL || createHash('sha256').update(n).digest()[0]! < 256 * share);
}

export interface PrismApi {
  doc: string;
  prefix: string;
  env: Record<string, string>;
}

/** The suite for one document (one file per document, so vitest runs them side by side). */
export function prismSuite(api: PrismApi) {
  describe(`prism ${api.doc}`, () => {
    let prism: Prism;
    let door: MountedDoor;
    beforeAll(async () => {
      [prism] = await Promise.all([startPrism(fixture(api.doc), 240_000), catalogOf(api.doc)]);
      door = await mountDoor(await catalogOf(api.doc), {
        prefix: api.prefix,
        baseUrl: prism.url,
        env: api.env,
      });
    }, 300_000);
    afterAll(async () => {
      await door?.close();
      await prism?.close();
    });

    it('_call succeeds for a deterministic sample of at least 100 operations, bodies built from _describe', async () => {
      const catalog: Catalog = await catalogOf(api.doc);
      const all = catalog.resources.flatMap((r) => r.methods.map((m) => `${r.path} ${m.name}`));
      const chosen = sample(all, 0.5);
      const failures: string[] = [];
      const methods = new Set<string>();
      for (const name of chosen) {
        const [resource, method] = name.split(' ') as [string, string];
        const described = await door.call('describe', { resource, method });
        expect(described.isError).toBe(false);
        const example = described.structured!.example as Record<string, unknown>;
        const result = await door.call('call', example);
        if (result.isError) failures.push(`${name}: ${result.text.slice(0, 400)}`);
        else methods.add(described.structured!.http as string);
      }
      expect(failures).toEqual([]);
      expect(chosen.length).toBeGreaterThanOrEqual(100);
      expect([...methods].sort()).toEqual(expect.arrayContaining(['DELETE', 'GET', 'POST']));
      expect(methods.has('PATCH') || methods.has('PUT')).toBe(true);
    }, 300_000);
  });
}
