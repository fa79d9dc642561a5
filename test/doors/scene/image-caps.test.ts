/**
 * Decoded image sizes are capped (authority.md §4), over real HTTP: an image
 * over 50 megapixels is refused from its header before anything decodes it,
 * whether it is uploaded or arrives inside a `.khr`. The images are built in
 * the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobHash } from '../../../src/kernel/blob-hash.js';
import { comicPage, pageOf } from './helpers.js';
import { blankPng, projectJson, snapshotJson, zipOf } from './hostile-files.js';
import { json, post, sceneServer, uploadPages, type SceneServer } from './server.js';

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

describe('image pixel cap', () => {
  it('a 31 KB PNG declaring 16000×16000 px is refused with requestTooLarge naming the size and the 50-megapixel limit', async () => {
    await post(s, 'projects', { name: 'Pixels' });
    const bomb = blankPng(16000, 16000);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const up = await uploadPages(s, [{ name: 'bomb.png', bytes: bomb }]);
    expect(up).toEqual({
      status: 413,
      body: {
        status: 413,
        code: 'requestTooLarge',
        message:
          'The image is 16000×16000 px (256 megapixels); the limit is 50 megapixels. Scale it down and upload it again.',
        width: 16000,
        height: 16000,
        limit: 50_000_000,
      },
    });
    const scene = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as {
      scene: { pages: unknown[] };
    };
    expect(scene.scene.pages).toEqual([]);
    // An ordinary page still goes in.
    expect((await uploadPages(s, [{ name: 'ok.png', bytes: await comicPage([]) }])).status).toBe(
      201,
    );
  });

  it('a page image over 50 megapixels that arrived inside a .khr is not decoded for its thumbnail', async () => {
    const bomb = blankPng(16000, 16000);
    const hash = blobHash(bomb);
    const page = pageOf([
      {
        id: '00000000-0000-4000-8000-00000000000a',
        transform: { x: 0, y: 0, width: 16000, height: 16000, rotationDeg: 0 },
        visible: true,
        kind: {
          image: {
            role: 'source',
            blob: hash,
            opacity: 1,
            naturalWidth: 16000,
            naturalHeight: 16000,
          },
        },
      },
    ]);
    const imported = await importKhr(
      await zipOf([
        { name: 'project.json', bytes: projectJson('Smuggled') },
        { name: 'snapshot.json', bytes: snapshotJson('Smuggled', [page]) },
        { name: `blobs/${hash.slice(0, 2)}/${hash.slice(2)}`, bytes: bomb },
      ]),
    );
    expect(imported.status).toBe(201);
    const thumb = await s.fetch(`${s.base}/api/v1/pages/${page.id}/thumbnail`);
    expect(await json(thumb)).toMatchObject({
      status: 413,
      code: 'requestTooLarge',
      message: expect.stringContaining('16000×16000 px'),
    });
  });
});
