/** Wrong types in `<prefix>_call` arguments are reported as wrong types (authority.md §4). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogOf, mountDoor, type MountedDoor } from './helpers.js';

let door: MountedDoor;
beforeAll(async () => {
  door = await mountDoor(await catalogOf('petstore.yaml'));
});
afterAll(async () => {
  await door.close();
});

describe('plane_call arguments of the wrong type', () => {
  it('limit given as "5" says it must be an integer, got the string "5"', async () => {
    const r = await door.call('call', { resource: 'pets', method: 'list', limit: '5' });
    expect(r.isError).toBe(true);
    const body = JSON.parse(r.text) as { code: string; message: string };
    expect(body.code).toBe('malformedRequest');
    expect(body.message).toMatch(
      /'limit' must be an integer between 1 and \d+; got the string "5"/,
    );
  });

  it('args given as a string says args must be an object, got the string', async () => {
    const r = await door.call('call', { resource: 'pets', method: 'list', args: 'limit=5' });
    expect(JSON.parse(r.text).message).toContain(
      '\'args\' must be an object; got the string "limit=5"',
    );
  });
});

describe('API arguments of the wrong type', () => {
  it('a body field of the wrong type names its pointer, the type and what was sent', async () => {
    const r = await door.call('call', {
      resource: 'pets',
      method: 'create',
      args: { data: { id: '7', name: 'Rex' } },
    });
    const body = JSON.parse(r.text) as { code: string; violations: unknown[] };
    expect(body.code).toBe('malformedRequest');
    expect(body.violations).toContainEqual({
      pointer: '/data/id',
      message: 'must be integer; got the string "7"',
    });
  });
});
