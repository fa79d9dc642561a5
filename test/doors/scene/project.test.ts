import { afterEach, describe, expect, it } from 'vitest';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  initProject,
  openProject,
  type Project,
} from '../../../src/doors/scene/project/project.js';
import { createProjectRoots } from '../../../src/doors/scene/project/roots.js';
import { createSceneSession } from '../../../src/doors/scene/session.js';
import { createLocalShelf } from '../../../src/doors/scene/project/shelf.js';
import { fileFolderStorage } from '../../../src/store/folder-file.js';
import { AirlockError } from '../../../src/kernel/errors.js';
import type { AirlockEvent } from '../../../src/kernel/events/events.js';
import { pageOf, tempDir, textNodeOf } from './helpers.js';

const dirs: string[] = [];
const open: Project[] = [];
const temp = () => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function opened(dir: string, compactEvery?: number) {
  const p = await openProject(dir, {
    storage: fileFolderStorage,
    ...(compactEvery ? { compactEvery } : {}),
  });
  open.push(p);
  return p;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AirlockError) return error.code;
    throw error;
  }
  return 'ok';
}

describe('projects on disk', () => {
  it('creates project.json, the op log, its oplog.lock and blobs/, and no whole-project lock; a clean close leaves the scene snapshot', async () => {
    const dir = join(temp(), 'comic.khrproj');
    initProject(dir, 'Comic');
    const p = await opened(dir);
    await p.history.apply([{ addPage: { page: pageOf() } }], 'page');
    for (const f of ['project.json', 'oplog.jsonl', 'oplog.lock', 'blobs'])
      expect(existsSync(join(dir, f))).toBe(true);
    expect(existsSync(join(dir, 'lock'))).toBe(false);
    await p.close();
    open.pop();
    expect(existsSync(join(dir, 'snapshot.json'))).toBe(true);
  });

  it('replays the op log on reopen: same scene, same epoch, undo still works', async () => {
    const dir = join(temp(), 'p');
    initProject(dir, 'P');
    const p = await opened(dir);
    const page = pageOf();
    await p.history.apply([{ addPage: { page } }], 'a');
    await p.history.apply([{ addNode: { page: page.id, node: textNodeOf('x') } }], 'b');
    await p.history.undo();
    const scene = structuredClone(p.history.state);
    await p.close();
    open.pop();
    const again = await opened(dir);
    expect(again.history.epoch).toBe(3);
    expect(again.history.state).toEqual(scene);
    expect(await again.history.redo()).toBe(4);
    expect(again.history.state.pages[0]!.nodes).toHaveLength(1);
  });

  it('compacts into snapshot.json and reopens from snapshot plus the log tail', async () => {
    const dir = join(temp(), 'p');
    initProject(dir, 'P');
    const p = await opened(dir, 3);
    for (let i = 0; i < 7; i++)
      await p.history.apply([{ addPage: { page: pageOf([], undefined, `p${i}`) } }], `p${i}`);
    expect(existsSync(join(dir, 'snapshot.json'))).toBe(true);
    expect(readFileSync(join(dir, 'oplog.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    const names = p.history.state.pages.map((x) => x.name);
    await p.close();
    open.pop();
    const again = await opened(dir, 3);
    expect(again.history.epoch).toBe(7);
    expect(again.history.state.pages.map((x) => x.name)).toEqual(names);
  });

  it('after a crash (no close), the acknowledged ops and their epoch are all there', async () => {
    const dir = join(temp(), 'p');
    initProject(dir, 'P');
    const p = await opened(dir);
    for (let i = 0; i < 5; i++) await p.history.apply([{ addPage: { page: pageOf() } }], `p${i}`);
    // Copy the folder as a killed process leaves it (log fsynced).
    const copy = join(temp(), 'copy');
    cpSync(dir, copy, { recursive: true });
    const again = await opened(copy);
    expect(again.history.epoch).toBe(5);
    expect(again.history.state.pages).toHaveLength(5);
  });

  it('a second open of the same project shares its history: one epoch counter, each sees the other after sync', async () => {
    const dir = join(temp(), 'p');
    initProject(dir, 'P');
    const first = await opened(dir);
    const second = await opened(dir);
    await first.history.apply([{ addPage: { page: pageOf() } }], 'one');
    // The second is behind: its write catches up and lands after the first's.
    expect(await second.history.apply([{ addPage: { page: pageOf() } }], 'two')).toBe(2);
    await first.history.sync();
    expect(first.history.epoch).toBe(2);
    expect(first.history.state.pages).toHaveLength(2);
    expect(await first.history.undo()).toBe(3);
    await second.history.sync();
    expect(second.history.state.pages).toHaveLength(1);
    expect(await second.history.redo()).toBe(4);
  });

  it('a whole-project lock file left by an earlier version does not stop the open', async () => {
    const dir = join(temp(), 'p');
    initProject(dir, 'P');
    writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: process.pid, host: 'elsewhere' }));
    const p = await opened(dir);
    expect(p.history.epoch).toBe(0);
  });
});

describe('project roots and the session', () => {
  const session = (root: string, events: AirlockEvent[] = []) =>
    createSceneSession({
      roots: createProjectRoots([root]),
      shelf: createLocalShelf(createProjectRoots([root]), fileFolderStorage),
      publish: (e) => events.push(e),
    });

  it('refuses paths outside the project roots, including through ..', async () => {
    const root = temp();
    const s = session(root);
    expect(await codeOf(s.open('/tmp/elsewhere', 'x'))).toBe('malformedRequest');
    expect(await codeOf(s.open('../escape', 'x'))).toBe('malformedRequest');
    expect(s.current()).toBeNull();
  });

  it('refuses a folder name over 255 bytes, a path over 4,095 bytes and a path through a file as malformedRequest naming the field, not a failing syscall', async () => {
    const root = temp();
    const s = session(root);
    await s.open('p', 'P');
    const refusal = async (path: string) => {
      try {
        await s.open(path, 'x');
      } catch (error) {
        if (error instanceof AirlockError) return { code: error.code, message: error.message };
        throw error;
      }
      throw new Error(`${path.slice(0, 40)} was accepted`);
    };
    expect(await refusal('é'.repeat(128))).toEqual({
      code: 'malformedRequest',
      message: expect.stringMatching(/^Field 'path' has a folder name of 256 bytes .* at most 255/),
    });
    expect(await refusal('a/'.repeat(2047))).toEqual({
      code: 'malformedRequest',
      message: expect.stringMatching(
        /^Field 'path' resolves to a path of \d+ bytes; .* at most 4095/,
      ),
    });
    expect(await refusal('p/project.json/inside')).toEqual({
      code: 'malformedRequest',
      message: `Field 'path' goes through the file ${join(realpathSync(root), 'p', 'project.json')}, which cannot hold folders; choose a path whose parents are folders.`,
    });
    expect(s.current()?.history.state.project.name).toBe('P');
  });

  it('creates with createName in a missing folder and refuses a non-empty one', async () => {
    const root = temp();
    const s = session(root);
    const info = await s.open('mine.khrproj', 'Mine');
    expect(info).toMatchObject({ name: 'Mine', path: join(root, 'mine.khrproj'), id: 'mine' });
    await s.close();
    expect(await codeOf(s.open('mine.khrproj', 'Again'))).toBe('malformedRequest');
    expect((await s.open('mine.khrproj')).name).toBe('Mine');
    await s.close();
  });

  it('createName on a root creates the project beneath it, not in the root', async () => {
    const root = temp();
    const s = session(root);
    const info = await s.open(root, 'My Comic');
    expect(info.path).toBe(join(realpathSync(root), 'my-comic.khrproj'));
    expect(existsSync(join(root, 'project.json'))).toBe(false);
    await s.close();
    const again = await s.open(root, 'My Comic');
    expect(again.path).toBe(join(realpathSync(root), 'my-comic-2.khrproj'));
    await s.close();
  });

  it('createName on an existing folder that is not a project creates beneath it', async () => {
    const root = temp();
    writeFileSync(join(root, 'readme.txt'), 'x');
    const s = session(root);
    mkdirSync(join(root, 'series'));
    writeFileSync(join(root, 'series', 'notes.txt'), 'volume 1');
    const info = await s.open('series', 'Volume One');
    expect(info.path).toBe(join(realpathSync(root), 'series', 'volume-one.khrproj'));
    expect(info.name).toBe('Volume One');
    await s.close();
  });

  it('opening a root without createName says it holds projects and is not one', async () => {
    const root = temp();
    const s = session(root);
    await expect(s.open(root)).rejects.toMatchObject({
      code: 'malformedRequest',
      message: expect.stringContaining('is a project root'),
    });
  });

  it('opening a folder without a project answers notFound', async () => {
    const s = session(temp());
    expect(await codeOf(s.open('nothing-here'))).toBe('notFound');
  });

  it('needs a project for apply, undo and redo (noProject)', async () => {
    const s = session(temp());
    expect(
      await codeOf(Promise.resolve().then(() => s.apply({ addPage: { page: pageOf() } }))),
    ).toBe('noProject');
    expect(await codeOf(Promise.resolve().then(() => s.undo()))).toBe('noProject');
  });

  it('publishes sceneChanged {epoch, label} for apply, undo and redo', async () => {
    const events: AirlockEvent[] = [];
    const s = session(temp(), events);
    await s.open('p', 'P');
    await s.apply({ addPage: { page: pageOf() } });
    await s.undo();
    await s.redo();
    expect(await s.undo()).toBe(4);
    expect(await s.undo()).toBeNull();
    expect(events).toEqual([
      { event: 'sceneChanged', epoch: 0, label: 'open P' },
      { event: 'sceneChanged', epoch: 1, label: 'addPage' },
      { event: 'sceneChanged', epoch: 2, label: 'undo addPage' },
      { event: 'sceneChanged', epoch: 3, label: 'redo addPage' },
      { event: 'sceneChanged', epoch: 4, label: 'undo addPage' },
    ]);
    await s.close();
  });
});
