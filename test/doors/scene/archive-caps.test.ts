/**
 * Decoded archive sizes are capped (authority.md §4), over real HTTP: a
 * `.khr` that inflates past 100× its size is refused while it inflates. The
 * zip is built in the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { projectJson, zipOf } from './hostile-files.js';
import { json, post, sceneServer, type SceneServer } from './server.js';

let s: SceneServer;
beforeAll(async () => {
  s = await sceneServer();
});
afterAll(async () => {
  await s.close();
});

const importKhr = (zip: Uint8Array) =>
  s.fetch(`${s.base}/api/v1/projects/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip' },
    body: new Uint8Array(zip),
  });

describe('archive inflation cap', () => {
  it('a .khr of 200 MiB of zeros (~200 KB zipped) is refused with requestTooLarge before it fills the disk; the open project stays current', async () => {
    await post(s, 'projects', { name: 'Before Bomb' });
    const before = readdirSync(join(s.data, 'projects')).sort();
    const zip = await zipOf([
      { name: 'project.json', bytes: projectJson('Bomb') },
      { name: 'blobs/00/zeros', zeros: 200 * 1024 * 1024 },
    ]);
    expect(zip.length).toBeLessThan(512 * 1024);
    const res = await importKhr(zip);
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({
      code: 'requestTooLarge',
      message: expect.stringMatching(/at most 100× the .* archive/),
    });
    expect(readdirSync(join(s.data, 'projects')).sort()).toEqual(before);
    expect(await json(await s.fetch(`${s.base}/api/v1/projects/current`))).toMatchObject({
      name: 'Before Bomb',
    });
  });

  it('a .khr that declares 1 KiB but inflates 200 MiB of zeros is stopped while inflating, not trusted', async () => {
    await post(s, 'projects', { name: 'Before Liar' });
    const before = readdirSync(join(s.data, 'projects')).sort();
    const zip = await zipOf([
      { name: 'project.json', bytes: projectJson('Liar') },
      { name: 'blobs/00/zeros', zeros: 200 * 1024 * 1024, declaredSize: 1024 },
    ]);
    const res = await importKhr(zip);
    expect(await json(res)).toMatchObject({
      status: 413,
      code: 'requestTooLarge',
      message: expect.stringMatching(/^The archive inflates past .* at most 100× the .* archive/),
    });
    expect(readdirSync(join(s.data, 'projects')).sort()).toEqual(before);
    expect(await json(await s.fetch(`${s.base}/api/v1/projects/current`))).toMatchObject({
      name: 'Before Liar',
    });
  });
});
