/** `<prefix>_call` decides its effect per call (authority.md §3): by HTTP method and the catalog's kind. */
import { describe, expect, it } from 'vitest';
import { createOpenapiDoor } from '../../../src/doors/openapi/door.js';
import type { Catalog } from '../../../src/doors/openapi/catalog.js';
import { effectOf } from '../../../src/kernel/calls/effect.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { catalogOf } from './helpers.js';

function callToolOf(catalog: Catalog) {
  const door = createOpenapiDoor({ catalog, env: {}, logger: silentLogger, prefix: 'api' });
  return door.tools.find((t) => t.name === 'api_call')!;
}

const effectOfCall = async (fixture: string, resource: string, method: string) =>
  effectOf(callToolOf(await catalogOf(fixture)), { resource, method });

describe('openapi call effect', () => {
  it('a GET method is a read', async () => {
    expect(await effectOfCall('petstore-expanded.yaml', 'pets', 'list')).toBe('read');
  });

  it('a DELETE method is destructive', async () => {
    expect(await effectOfCall('petstore-expanded.yaml', 'pets', 'delete')).toBe('destructive');
  });

  it('a POST method is a write', async () => {
    expect(await effectOfCall('petstore-expanded.yaml', 'pets', 'create')).toBe('write');
  });

  it('a POST the catalog marks destructive is destructive', async () => {
    expect(await effectOfCall('asana_oas.yaml', 'goals', 'removeFollowers')).toBe('destructive');
  });

  it('a DELETE stays destructive even when an edited catalog calls it a read', async () => {
    const catalog = structuredClone(await catalogOf('petstore-expanded.yaml'));
    for (const r of catalog.resources)
      for (const m of r.methods) if (m.http === 'DELETE') m.kind = 'read';
    expect(effectOf(callToolOf(catalog), { resource: 'pets', method: 'delete' })).toBe(
      'destructive',
    );
  });

  it('a method the catalog lacks is a read: it is answered notFound before any request', async () => {
    expect(await effectOfCall('petstore-expanded.yaml', 'pets', 'explode')).toBe('read');
  });
});
