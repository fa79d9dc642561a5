/**
 * Hostile project files over real HTTP and MCP: a broken `.khr` or a broken
 * project folder is refused by name, and the project that was open stays
 * current and readable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { imageNodeOf, pageOf } from './helpers.js';
import { projectJson, snapshotJson, zipOf } from './hostile-files.js';
import { json, post, sceneServer, type SceneServer } from './server.js';
import { structuredOf, toolJson } from '../../helpers/results.js';

let s: SceneServer;
let client: Client;
beforeAll(async () => {
  s = await sceneServer();
  client = await s.mcp();
});
afterAll(async () => {
  await s.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

const importKhr = (zip: Uint8Array) =>
  s.fetch(`${s.base}/api/v1/projects/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip' },
    body: new Uint8Array(zip),
  });

/** Opens a fresh project named `name` holding one page; returns the page id. */
async function openKeeper(name: string): Promise<string> {
  expect((await post(s, 'projects', { name })).status).toBe(201);
  const page = pageOf();
  expect((await post(s, 'history/apply', { op: { addPage: { page } } })).status).toBe(200);
  return page.id;
}

/** The project named `name` with page `pageId` is still what every read route and get_scene serve. */
async function expectStillServing(name: string, pageId: string) {
  const list = await s.fetch(`${s.base}/api/v1/projects`);
  expect(list.status).toBe(200);
  expect((await json(list)).current).toMatchObject({ name });
  const current = await s.fetch(`${s.base}/api/v1/projects/current`);
  expect(current.status).toBe(200);
  expect(await json(current)).toMatchObject({ name });
  const scene = await s.fetch(`${s.base}/api/v1/scene.json`);
  expect(scene.status).toBe(200);
  const body = (await json(scene)) as { scene: { pages: { id: string }[] } };
  expect(body.scene.pages.map((p) => p.id)).toEqual([pageId]);
  const tool = await call('koharu.get_scene');
  expect(tool.isError).toBeFalsy();
  expect(structuredOf(tool)).toMatchObject({ scene: { project: { name } } });
}

const projectFolders = () => readdirSync(join(s.data, 'projects')).sort();

describe('a broken project cannot break the scene door', () => {
  it('a .khr whose snapshot.json is not a snapshot is refused with malformedRequest naming the file and field; the open project stays current', async () => {
    const pageId = await openKeeper('Keeper One');
    const before = projectFolders();
    const res = await importKhr(
      await zipOf([
        { name: 'project.json', bytes: projectJson('Broken') },
        { name: 'snapshot.json', bytes: new TextEncoder().encode('{"not":"a snapshot"}') },
      ]),
    );
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.code).toBe('malformedRequest');
    expect(body.message).toContain('snapshot.json: `epoch` must be a number; got nothing');
    expect(projectFolders()).toEqual(before);
    await expectStillServing('Keeper One', pageId);
  });

  it('a .khr whose snapshot has pages that are not an array is refused naming `state.pages`', async () => {
    const pageId = await openKeeper('Keeper Two');
    const snapshot = JSON.parse(new TextDecoder().decode(snapshotJson('Broken'))) as {
      state: { pages: unknown };
    };
    snapshot.state.pages = { '0': pageOf() };
    const res = await importKhr(
      await zipOf([
        { name: 'project.json', bytes: projectJson('Broken') },
        { name: 'snapshot.json', bytes: new TextEncoder().encode(JSON.stringify(snapshot)) },
      ]),
    );
    expect(await json(res)).toMatchObject({
      status: 400,
      code: 'malformedRequest',
      message: expect.stringContaining(
        'snapshot.json: `state.pages` must be an array; got an object',
      ),
    });
    await expectStillServing('Keeper Two', pageId);
  });

  it('a .khr whose snapshot breaks a scene invariant (two source images on a page) is refused', async () => {
    const pageId = await openKeeper('Keeper Three');
    const page = pageOf([imageNodeOf('source'), imageNodeOf('source')]);
    const res = await importKhr(
      await zipOf([
        { name: 'project.json', bytes: projectJson('Broken') },
        { name: 'snapshot.json', bytes: snapshotJson('Broken', [page]) },
      ]),
    );
    expect(await json(res)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringMatching(/snapshot\.json: `state\.pages\.0`.*source image/),
    });
    await expectStillServing('Keeper Three', pageId);
  });

  it('open_project (and the REST open) on a folder whose snapshot.json is broken answers malformedRequest and keeps the open project', async () => {
    const opened = await call('koharu.open_project', {
      path: 'victim.khrproj',
      createName: 'Victim',
    });
    expect(opened.isError).toBeFalsy();
    const victim = String(structuredOf(opened).path);
    expect((await post(s, 'projects/current', undefined, 'DELETE')).status).toBe(204);
    expect(existsSync(join(victim, 'snapshot.json'))).toBe(true);
    writeFileSync(join(victim, 'snapshot.json'), '{"not":"a snapshot"}');

    const pageId = await openKeeper('Keeper Four');
    const viaTool = await call('koharu.open_project', { path: victim });
    expect(viaTool.isError).toBe(true);
    expect(toolJson(viaTool)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('snapshot.json: `epoch` must be a number'),
    });
    await expectStillServing('Keeper Four', pageId);

    const viaRest = await post(s, 'projects/current', { id: 'victim' }, 'PUT');
    expect(await json(viaRest)).toMatchObject({
      status: 400,
      code: 'malformedRequest',
      message: expect.stringContaining('snapshot.json'),
    });
    await expectStillServing('Keeper Four', pageId);
  });

  it('open_project on a folder whose project.json is not JSON answers malformedRequest naming project.json', async () => {
    const dir = join(s.data, 'projects', 'garbled.khrproj');
    const created = await call('koharu.open_project', { path: dir, createName: 'Garbled' });
    expect(created.isError).toBeFalsy();
    const pageId = await openKeeper('Keeper Five');
    writeFileSync(join(dir, 'project.json'), '{ not json');
    const r = await call('koharu.open_project', { path: dir });
    expect(toolJson(r)).toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('project.json'),
    });
    await expectStillServing('Keeper Five', pageId);
  });
});
