/**
 * Exports and project deletion in scale-out (docs/scale-out.md "The scene
 * door"): two instances' scene sessions on one PostgreSQL store and blob
 * store. An export kept through one instance is served by the other at the
 * same `url`; deleting a project leaves none of its records, log rows or
 * export records, and its exports' `url` answers notFound.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BlobStore, Store } from '../../../src/kernel/store.js';
import { exportProject } from '../../../src/doors/scene/files/exports.js';
import { createProjectRoots } from '../../../src/doors/scene/project/roots.js';
import { fileRoutes } from '../../../src/doors/scene/rest/routes-files.js';
import type { RouteDeps } from '../../../src/doors/scene/rest/rest.js';
import { createSceneSession, type SceneSession } from '../../../src/doors/scene/session.js';
import { createSharedShelf } from '../../../src/doors/scene/project/shelf.js';
import type { RestRequest, RestResponse } from '../../../src/transport/surface.js';
import { createPostgresBlobStore } from '../../../src/store/blobs-postgres.js';
import { createStoreFolderStorage } from '../../../src/store/folder-store.js';
import { createPostgresStore, type PostgresStore } from '../../../src/store/postgres/index.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../../services/postgres.js';
import { comicPage, imageNodeOf, pageOf, tempDir } from './helpers.js';

await describeWithPostgres('scene exports and deletion on a shared store', () => {
  const schema = uniqueSchema('scene_exports');
  const data = tempDir('airlock-scene-shared-');
  let store: PostgresStore;
  let blobs: BlobStore;
  let a: SceneSession;
  let b: SceneSession;

  const instance = () => {
    const roots = createProjectRoots([`${data}/projects`]);
    const storage = createStoreFolderStorage(store, blobs);
    return createSceneSession({
      roots,
      shelf: createSharedShelf(roots, storage, data, () => store as Store),
      publish: () => undefined,
    });
  };

  /** `GET /api/v1/blobs/{hash}` on an instance, as the HTTP app calls it after its checks. */
  const getBlob = async (session: SceneSession, hash: string) => {
    await session.sync();
    const route = fileRoutes({ session } as RouteDeps).find((r) => r.path === 'blobs/{hash}')!;
    const req: RestRequest = {
      params: { hash },
      query: new URLSearchParams(),
      body: null,
      headers: {},
    };
    return (await route.handler(req)) as RestResponse;
  };

  const rowsOf = async (log: string) =>
    store.read(async (tx) => ({
      head: await tx.records.get('history.head', `scene/${log}`),
      snapshot: await tx.records.get('history.snapshot', `scene/${log}`),
      entries: await tx.records.list('history.entry', { prefix: `scene/${log}/` }),
      exports: await tx.records.list('scene.exports', { prefix: `${log}/` }),
    }));

  beforeAll(async () => {
    store = await createPostgresStore({ url: PG_URL, schema });
    blobs = createPostgresBlobStore(store.pool, store.schema);
    a = instance();
    b = instance();
  });
  afterAll(async () => {
    await a?.close();
    await store?.close();
    await dropSchema(schema);
  });

  it('an export made through one instance is served by the other at its url, with the same bytes, type and name', async () => {
    await a.create('Exported');
    const png = await comicPage([{ text: 'HI', x: 20, y: 60 }], 120, 80);
    const hash = await a.require().blobs.put(png);
    await a.apply({ addPage: { page: pageOf([imageNodeOf('rendered', hash)]) } });
    const file = await exportProject(a.require(), 'pdf', undefined, true);
    const kept = await a.require().exports.keep(file);
    expect(kept.uri).toBe(`urn:sha256:${kept.hash}`);

    const served = await getBlob(b, kept.hash);
    expect(served.status).toBe(200);
    expect(served.raw).toEqual({
      bytes: file.bytes,
      contentType: 'application/pdf',
      filename: 'exported.pdf',
    });
    // The page image the scene names is served too.
    expect((await getBlob(b, hash)).raw?.bytes).toEqual(png);
  });

  it('a deleted project leaves no record, log rows or export records, and its export url answers notFound', async () => {
    await a.create('Doomed');
    const png = await comicPage([{ text: 'BYE', x: 20, y: 60 }], 120, 80);
    const hash = await a.require().blobs.put(png);
    await a.apply({ addPage: { page: pageOf([imageNodeOf('rendered', hash)]) } });
    const { hash: exported } = await a
      .require()
      .exports.keep(await exportProject(a.require(), 'pdf', undefined, true));
    const doomed = (await a.projects()).find((p) => p.name === 'Doomed')!;
    const log = (
      await store.read((tx) => tx.records.list<{ name: string; log: string }>('scene.projects'))
    ).find((r) => r.value.name === 'Doomed')!.value.log;
    expect((await rowsOf(log)).entries).toHaveLength(1);

    await b.remove(doomed.id);
    expect(await rowsOf(log)).toEqual({ head: null, snapshot: null, entries: [], exports: [] });
    expect((await b.projects()).map((p) => p.name)).toEqual(['Exported']);

    // Another project open: the deleted project's export and page image are not its blobs.
    const other = (await b.projects())[0]!;
    await b.sync(); // as every route does first
    await b.open(other.path);
    for (const gone of [exported, hash])
      await expect(getBlob(a, gone)).rejects.toMatchObject({ code: 'notFound' });
    // The bytes stay in the shared blob store (other projects and doors may hold them).
    expect(await blobs.has(exported)).toBe(true);
  });

  it('deleting one project keeps the log rows of the others', async () => {
    const name = `Kept ${randomUUID().slice(0, 8)}`;
    await a.create(name);
    await a.apply({ addPage: { page: pageOf() } });
    await a.create('Removed');
    const removed = (await a.projects()).find((p) => p.name === 'Removed')!;
    await a.remove(removed.id);
    const kept = (
      await store.read((tx) => tx.records.list<{ name: string; log: string }>('scene.projects'))
    ).find((r) => r.value.name === name)!.value.log;
    expect((await rowsOf(kept)).entries).toHaveLength(1);
  });
});
