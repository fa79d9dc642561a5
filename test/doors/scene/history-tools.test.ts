/**
 * koharu.undo / koharu.redo are judged by the ops they would apply
 * (issue 24): their effect and targets, and the state they run on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { historyMoveTool } from '../../../src/doors/scene/history/history-tools.js';
import { createProjectRoots } from '../../../src/doors/scene/project/roots.js';
import { createSceneSession, type SceneSession } from '../../../src/doors/scene/session.js';
import { createLocalShelf } from '../../../src/doors/scene/project/shelf.js';
import { fileFolderStorage } from '../../../src/store/folder-file.js';
import { effectOf } from '../../../src/kernel/calls/effect.js';
import { AirlockError } from '../../../src/kernel/errors.js';
import type { ToolContext } from '../../../src/kernel/tool.js';
import { connection } from '../../../src/kernel/connection.js';
import { pageOf, tempDir, textNodeOf } from './helpers.js';
import { removalsOf } from '../../../src/doors/scene/policy/op-policy.js';
import { emptyScene } from '../../../src/doors/scene/model/model.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function opened(): Promise<SceneSession> {
  const root = tempDir();
  dirs.push(root);
  const roots = createProjectRoots([root]);
  const session = createSceneSession({
    roots,
    shelf: createLocalShelf(roots, fileFolderStorage),
    publish: () => undefined,
  });
  await session.open('p', 'P');
  return session;
}

/** A call as the kernel makes it: the effect is decided first, the handler runs later. */
function judge(session: SceneSession, direction: 'undo' | 'redo') {
  const tool = historyMoveTool(direction, `koharu.${direction}`, session);
  const input = tool.input.parse({});
  const conn = connection('agent:test', 'http-principal', undefined, 'test');
  return {
    effect: () => effectOf(tool, input),
    targets: async () => tool.policy!.targets!(input, conn),
    run: async () => {
      try {
        return await tool.handler(input, { operation: null } as unknown as ToolContext);
      } catch (error) {
        if (error instanceof AirlockError) return error.toFailure();
        throw error;
      }
    },
  };
}

const pageNames = (s: SceneSession) =>
  s
    .require()
    .scene()
    .pages.map((p) => p.name);

describe('undo and redo take the effect of what they apply', () => {
  it('undoing an added page is a destructive remove_page; undoing an edit is a write', async () => {
    const s = await opened();
    const page = pageOf([textNodeOf()], randomUUID(), 'one');
    await s.apply({ addPage: { page } });
    const removal = judge(s, 'undo');
    expect(await removal.effect()).toBe('destructive');
    expect(await removal.targets()).toEqual(['remove_page']);
    await s.apply({ updatePage: { id: page.id, patch: { name: 'two' } } });
    const edit = judge(s, 'undo');
    expect(await edit.effect()).toBe('write');
    expect(await edit.targets()).toEqual(['update_page']);
  });

  it('redoing a removal is destructive; with nothing to redo it is a write with no target', async () => {
    const s = await opened();
    const page = pageOf([], randomUUID(), 'one');
    await s.apply({ addPage: { page } });
    expect(await judge(s, 'redo').effect()).toBe('write');
    expect(await judge(s, 'redo').targets()).toEqual([]);
    await s.apply({ removePage: { id: page.id } });
    await s.undo();
    const redo = judge(s, 'redo');
    expect(await redo.effect()).toBe('destructive');
    expect(await redo.targets()).toEqual(['remove_page']);
  });
});

describe('undo and redo run only on the state they were judged on', () => {
  it('an undo judged on an edit answers versionConflict once another undo reverted that edit', async () => {
    const s = await opened();
    const page = pageOf([], randomUUID(), 'kept');
    await s.apply({ addPage: { page } });
    await s.apply({ updatePage: { id: page.id, patch: { name: 'edited' } } });
    const call = judge(s, 'undo');
    expect(await call.effect()).toBe('write');
    await s.undo();
    expect(await call.run()).toMatchObject({ code: 'versionConflict' });
    expect(pageNames(s)).toEqual(['kept']);
  });

  it('a redo judged on one project does not run on another opened since', async () => {
    const s = await opened();
    await s.apply({ updateProjectMeta: { patch: { name: 'renamed' } } });
    await s.undo();
    const call = judge(s, 'redo');
    expect(await call.effect()).toBe('write');
    await s.open('q', 'Q');
    await s.apply({ addPage: { page: pageOf([], randomUUID(), 'q1') } });
    await s.undo();
    expect(await call.run()).toMatchObject({ code: 'versionConflict' });
    expect(pageNames(s)).toEqual([]);
  });

  it('an undo judged with no project open does not run on a project opened since', async () => {
    const s = await opened();
    await s.apply({ addPage: { page: pageOf([], randomUUID(), 'p1') } });
    await s.close();
    const call = judge(s, 'undo');
    expect(await call.effect()).toBe('write');
    await s.open('p');
    expect(await call.run()).toMatchObject({ code: 'versionConflict' });
    expect(pageNames(s)).toEqual(['p1']);
  });
});

describe('what a removal shows the owner', () => {
  it('names removed pages with their node count and removed nodes by kind, text and page', () => {
    const node = textNodeOf('Hello there, a rather long line of dialogue that goes on');
    const page = pageOf([node, textNodeOf('b')], randomUUID(), 'cover');
    const scene = { ...emptyScene('P', '2026-01-01T00:00:00Z'), pages: [page] };
    const ghost = randomUUID();
    expect(
      removalsOf(scene, [
        {
          batch: {
            label: 'tidy',
            ops: [
              { removeNode: { page: page.id, id: node.id } },
              { removeNode: { page: page.id, id: ghost } },
            ],
          },
        },
        { removePage: { id: page.id } },
      ]),
    ).toEqual([
      'text node "Hello there, a rather long line of dialo…" on page "cover"',
      `node ${ghost} on page "cover"`,
      'page "cover" (2 nodes)',
    ]);
  });
});
