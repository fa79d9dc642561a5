/** The scene door's effects (authority.md §3): apply by op kind, the other tools fixed. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sceneTools, toolNames } from '../../../src/doors/scene/tools/tools.js';
import type { SceneSession } from '../../../src/doors/scene/session.js';
import { effectOf } from '../../../src/kernel/calls/effect.js';
import { textNodeOf } from './helpers.js';

const names = toolNames('koharu');
// The tools touch the session only in their handlers (and the roots in a description).
const session = { roots: { roots: ['/projects'] } } as unknown as SceneSession;
const tools = sceneTools(names, session, new Map());
const tool = (name: string) => tools.find((t) => t.name === name)!;
const page = randomUUID();
const node = randomUUID();

/** The effect of applying `op`, after the tool's own validation. */
const applyEffect = (op: unknown) => {
  const apply = tool(names.apply);
  return effectOf(apply, apply.input.parse({ op }));
};

describe('scene apply effect', () => {
  it('an op that adds or changes content is a write', () => {
    expect(applyEffect({ addNode: { page, node: textNodeOf() } })).toBe('write');
    expect(applyEffect({ updatePage: { id: page, patch: { name: 'p2' } } })).toBe('write');
  });

  it('removing a node is destructive', () => {
    expect(applyEffect({ removeNode: { page, id: node } })).toBe('destructive');
  });

  it('removing a page is destructive, also with a PascalCase tag', () => {
    expect(applyEffect({ RemovePage: { id: page } })).toBe('destructive');
  });

  it('a batch is destructive when any op in it, however nested, removes', () => {
    const inner = { batch: { label: 'inner', ops: [{ removeNode: { page, id: node } }] } };
    const outer = { batch: { label: 'outer', ops: [{ reorderPages: { order: [page] } }, inner] } };
    expect(applyEffect(outer)).toBe('destructive');
  });

  it('a batch that only adds or changes is a write', () => {
    const ops = [{ reorderPages: { order: [page] } }, { updatePage: { id: page, patch: {} } }];
    expect(applyEffect({ batch: { label: 'tidy', ops } })).toBe('write');
  });
});

describe('scene tool effects', () => {
  it('reading tools are reads; export (it writes a file), import_pages, close_project and the rest write', () => {
    // apply, undo and redo are decided per call (undo and redo: history-tools.test.ts).
    const perCall = [names.apply, names.undo, names.redo];
    const fixed = tools.filter((t) => !perCall.includes(t.name));
    const effects = Object.fromEntries(fixed.map((t) => [t.name, effectOf(t, {})]));
    expect(effects).toEqual({
      [names.openProject]: 'write',
      [names.closeProject]: 'write',
      [names.startPipeline]: 'write',
      [names.getScene]: 'read',
      [names.listEngines]: 'read',
      [names.getJob]: 'read',
      [names.cancelJob]: 'write',
      [names.export]: 'write',
      [names.importPages]: 'write',
    });
  });
});
