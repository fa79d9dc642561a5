import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { emptyScene, type Scene } from '../../../src/doors/scene/model/model.js';
import { OpSchema, type Op } from '../../../src/doors/scene/model/ops.js';
import { applyOp, sceneReducer, SceneOpError } from '../../../src/doors/scene/model/reducer.js';
import { openHistory } from '../../../src/kernel/writes/history.js';
import { HASH_A, HASH_B, imageNodeOf, pageOf, textNodeOf } from './helpers.js';

const base = (): Scene => emptyScene('test', '2026-01-01T00:00:00.000Z');
const parse = (raw: unknown): Op => OpSchema.parse(raw);

function withPage(): { scene: Scene; pageId: string; textId: string; sourceId: string } {
  const text = textNodeOf('hi');
  const source = imageNodeOf('source');
  const page = pageOf([source, text]);
  const scene = applyOp(base(), { addPage: { page } }).state;
  return { scene, pageId: page.id, textId: text.id, sourceId: source.id };
}

function refusal(fn: () => unknown): SceneOpError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SceneOpError) return error;
    throw error;
  }
  throw new Error('the op was not refused');
}

/** Applying an op then its inverse gives back the scene it started from. */
function roundTrips(scene: Scene, op: Op): Scene {
  const { state, inverse } = applyOp(scene, op);
  expect(applyOp(state, inverse).state).toEqual(scene);
  return state;
}

describe('scene ops', () => {
  it('addPage inserts at the index and its inverse removes it', () => {
    const { scene } = withPage();
    const page = pageOf([], randomUUID(), 'first');
    const next = roundTrips(scene, { addPage: { page, at: 0 } });
    expect(next.pages[0]!.id).toBe(page.id);
  });

  it('removePage is undone to the same index with the same nodes', () => {
    const { scene, pageId } = withPage();
    const two = applyOp(scene, { addPage: { page: pageOf() } }).state;
    expect(roundTrips(two, { removePage: { id: pageId } }).pages).toHaveLength(1);
  });

  it('updatePage patches name and size and restores them on undo', () => {
    const { scene, pageId } = withPage();
    const next = roundTrips(scene, {
      updatePage: { id: pageId, patch: { name: 'cover', width: 7 } },
    });
    expect(next.pages[0]).toMatchObject({ name: 'cover', width: 7, height: 80 });
  });

  it('reorderPages takes the full order and its inverse restores the old one', () => {
    const { scene } = withPage();
    const two = applyOp(scene, { addPage: { page: pageOf() } }).state;
    const order = two.pages.map((p) => p.id).reverse();
    expect(roundTrips(two, { reorderPages: { order } }).pages.map((p) => p.id)).toEqual(order);
  });

  it('addNode, removeNode and reorderNodes round-trip', () => {
    const { scene, pageId, textId } = withPage();
    const node = textNodeOf('new');
    const added = roundTrips(scene, { addNode: { page: pageId, node, at: 1 } });
    expect(added.pages[0]!.nodes[1]!.id).toBe(node.id);
    roundTrips(added, { removeNode: { page: pageId, id: textId } });
    const order = added.pages[0]!.nodes.map((n) => n.id).reverse();
    roundTrips(added, { reorderNodes: { page: pageId, order } });
  });

  it('updateNode patches transform, visibility and text data; null clears a field', () => {
    const { scene, pageId, textId } = withPage();
    const patched = roundTrips(scene, {
      updateNode: {
        page: pageId,
        id: textId,
        patch: {
          transform: { x: 40 },
          visible: false,
          data: { text: { translation: 'olá', text: null } },
        },
      },
    });
    const node = patched.pages[0]!.nodes[1]!;
    expect(node.transform.x).toBe(40);
    expect(node.transform.width).toBe(50);
    expect(node.visible).toBe(false);
    expect(node.kind).toEqual({ text: { translation: 'olá' } });
  });

  it('updateProjectMeta renames and sets or clears the default font', () => {
    const scene = base();
    const next = roundTrips(scene, {
      updateProjectMeta: { patch: { name: 'renamed', style: { defaultFont: 'DejaVu Sans' } } },
    });
    expect(next.project).toMatchObject({ name: 'renamed', style: { defaultFont: 'DejaVu Sans' } });
    const cleared = roundTrips(next, {
      updateProjectMeta: { patch: { style: { defaultFont: null } } },
    });
    expect(cleared.project.style).toEqual({});
  });

  it('a batch applies in order and its inverse undoes all of it', () => {
    const page = pageOf();
    roundTrips(base(), {
      batch: {
        label: 'two',
        ops: [{ addPage: { page } }, { addNode: { page: page.id, node: textNodeOf() } }],
      },
    });
  });
});

describe('op errors name the op and the reason', () => {
  const { scene, pageId, textId } = withPage();
  const missing = randomUUID();
  const cases: [string, Op, string, string][] = [
    ['pageNotFound', { removePage: { id: missing } }, 'removePage', 'notFound'],
    ['nodeNotFound', { removeNode: { page: pageId, id: missing } }, 'removeNode', 'notFound'],
    ['pageExists', { addPage: { page: pageOf([], pageId) } }, 'addPage', 'malformedRequest'],
    [
      'nodeExists',
      { addNode: { page: pageId, node: textNodeOf('x', textId) } },
      'addNode',
      'malformedRequest',
    ],
    [
      'indexOutOfRange',
      { addNode: { page: pageId, node: textNodeOf(), at: 9 } },
      'addNode',
      'malformedRequest',
    ],
    [
      'reorderSetMismatch',
      { reorderNodes: { page: pageId, order: [textId] } },
      'reorderNodes',
      'malformedRequest',
    ],
    [
      'nodeKindMismatch',
      { updateNode: { page: pageId, id: textId, patch: { data: { image: { opacity: 0.5 } } } } },
      'updateNode',
      'malformedRequest',
    ],
    [
      'invariant',
      { addNode: { page: pageId, node: imageNodeOf('source', HASH_B) } },
      'addNode',
      'malformedRequest',
    ],
  ];
  for (const [kind, op, tag, code] of cases) {
    it(`${kind}: ${tag} is refused with code ${code}`, () => {
      const error = refusal(() => applyOp(scene, op));
      expect(error.kind).toBe(kind);
      expect(error.code).toBe(code);
      expect(error.message).toContain(tag);
      expect(error.message).toContain(kind);
    });
  }

  it('a failing op inside a batch names the batch and the op index', () => {
    const error = refusal(() =>
      applyOp(scene, {
        batch: {
          label: 'b',
          ops: [{ addPage: { page: pageOf() } }, { removePage: { id: missing } }],
        },
      }),
    );
    expect(error.kind).toBe('pageNotFound');
    expect(error.message).toMatch(/batch 'b' op 1 \(removePage\)/);
  });

  it('a second mask of the same role breaks the invariant', () => {
    const mask = (blob: string) => ({
      ...imageNodeOf('custom'),
      kind: { mask: { role: 'segment' as const, blob } },
    });
    const one = applyOp(scene, { addNode: { page: pageId, node: mask(HASH_A) } }).state;
    expect(
      refusal(() => applyOp(one, { addNode: { page: pageId, node: mask(HASH_B) } })).kind,
    ).toBe('invariant');
  });
});

describe('op JSON', () => {
  it('accepts PascalCase variant tags as the reference docs spell them', () => {
    const page = pageOf();
    expect(parse({ AddPage: { page } })).toEqual({ addPage: { page } });
    expect(parse({ Batch: { label: 'l', ops: [{ RemovePage: { id: page.id } }] } })).toEqual({
      batch: { label: 'l', ops: [{ removePage: { id: page.id } }] },
    });
    expect(
      parse({
        UpdateNode: {
          page: page.id,
          id: page.id,
          patch: { data: { Text: { translation: 'x' } } },
        },
      }),
    ).toEqual({
      updateNode: { page: page.id, id: page.id, patch: { data: { text: { translation: 'x' } } } },
    });
  });

  it('accepts prev* fields and ignores them: the inverse comes from the live scene', () => {
    const { scene, pageId, textId } = withPage();
    const op = parse({
      removeNode: {
        page: pageId,
        id: textId,
        prevNode: textNodeOf('forged'),
        prev_index: 0,
      },
    });
    expect(op).toEqual({ removeNode: { page: pageId, id: textId } });
    const { inverse } = applyOp(scene, op);
    expect(inverse).toEqual({
      addNode: { page: pageId, node: scene.pages[0]!.nodes[1], at: 1 },
    });
  });

  it('refuses an unknown variant, two variants at once, and unknown fields', () => {
    expect(OpSchema.safeParse({ addSticker: {} }).success).toBe(false);
    const page = pageOf();
    expect(OpSchema.safeParse({ addPage: { page }, removePage: { id: page.id } }).success).toBe(
      false,
    );
    expect(OpSchema.safeParse({ addPage: { page, extra: 1 } }).success).toBe(false);
  });

  it('refuses a patch field that cannot be cleared (null for a required field)', () => {
    const id = randomUUID();
    expect(
      OpSchema.safeParse({
        updateNode: { page: id, id, patch: { data: { image: { blob: null } } } },
      }).success,
    ).toBe(false);
  });
});

describe('reducer properties', () => {
  // An op "intent" is interpreted against the live scene, so most generated ops are valid.
  const intent = fc.record({
    kind: fc.integer({ min: 0, max: 8 }),
    pick: fc.nat(),
    pick2: fc.nat(),
    text: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
  });

  function opFor(
    scene: Scene,
    i: { kind: number; pick: number; pick2: number; text: string | null },
  ): Op {
    const pages = scene.pages;
    const page = pages.length ? pages[i.pick % pages.length]! : null;
    const node = page && page.nodes.length ? page.nodes[i.pick2 % page.nodes.length]! : null;
    switch (page ? i.kind : 0) {
      case 0:
        return { addPage: { page: pageOf([textNodeOf('t')]), at: i.pick % (pages.length + 1) } };
      case 1:
        return { removePage: { id: page!.id } };
      case 2:
        return {
          updatePage: { id: page!.id, patch: { name: i.text ?? 'n', width: 1 + (i.pick2 % 50) } },
        };
      case 3:
        return { reorderPages: { order: [...pages.map((p) => p.id)].reverse() } };
      case 4:
        return {
          addNode: {
            page: page!.id,
            node: textNodeOf(i.text ?? ''),
            at: i.pick2 % (page!.nodes.length + 1),
          },
        };
      case 5:
        return node
          ? { removeNode: { page: page!.id, id: node.id } }
          : { removePage: { id: page!.id } };
      case 6:
        return node
          ? {
              updateNode: {
                page: page!.id,
                id: node.id,
                patch: { data: { text: { translation: i.text } } },
              },
            }
          : { updatePage: { id: page!.id, patch: { height: 3 } } };
      case 7:
        return { reorderNodes: { page: page!.id, order: page!.nodes.map((n) => n.id).reverse() } };
      default:
        return {
          batch: {
            label: 'b',
            ops: [
              { addPage: { page: pageOf() } },
              { updatePage: { id: page!.id, patch: { name: 'b' } } },
            ],
          },
        };
    }
  }

  it('applying any op then its inverse restores the scene, and never mutates the input', () => {
    fc.assert(
      fc.property(fc.array(intent, { maxLength: 30 }), (intents) => {
        let scene = base();
        for (const i of intents) {
          const op = opFor(scene, i);
          const before = scene;
          const frozen = structuredClone(before);
          scene = roundTrips(before, op);
          expect(before).toEqual(frozen);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('undoing every step through the history returns to the first scene; redoing returns to the last', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(intent, { minLength: 1, maxLength: 20 }), async (intents) => {
        const h = await openHistory({ reducer: sceneReducer, initial: base() });
        for (const i of intents) await h.apply([opFor(h.state, i)], 'step');
        const last = structuredClone(h.state);
        while ((await h.undo()) !== null);
        expect(h.state).toEqual(base());
        while ((await h.redo()) !== null);
        expect(h.state).toEqual(last);
      }),
      { numRuns: 100 },
    );
  });

  it('a batch with a failing op applies nothing and keeps the epoch', async () => {
    const h = await openHistory({ reducer: sceneReducer, initial: base() });
    await h.apply([{ addPage: { page: pageOf() } }], 'one');
    const before = structuredClone(h.state);
    await expect(
      h.apply(
        [
          {
            batch: {
              label: 'bad',
              ops: [{ addPage: { page: pageOf() } }, { removePage: { id: randomUUID() } }],
            },
          },
        ],
        'bad',
      ),
    ).rejects.toBeInstanceOf(SceneOpError);
    expect(h.state).toEqual(before);
    expect(h.epoch).toBe(1);
  });

  it('node ops never mutate the scene they were given', () => {
    const { scene, pageId, textId } = withPage();
    const frozen = structuredClone(scene);
    applyOp(scene, {
      updateNode: { page: pageId, id: textId, patch: { data: { text: { text: 'x' } } } },
    });
    applyOp(scene, { removeNode: { page: pageId, id: textId } });
    applyOp(scene, { addNode: { page: pageId, node: imageNodeOf('rendered') } });
    expect(scene).toEqual(frozen);
  });
});
