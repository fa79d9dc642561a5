/**
 * The scene reducer (kernel §7): `apply(scene, op) -> {state, inverse}`, pure
 * (inputs are never mutated; untouched pages and nodes are shared), inverses
 * computed from the live scene. A refused op throws a `SceneOpError` that
 * names the op and the reason (spec/scene.md "Ops"); inside a batch nothing
 * is applied, because the history keeps the state from before the call.
 */
import { AirlockError, type Reducer } from '../../../kernel/index.js';
import {
  kindTag,
  type Node,
  type Page,
  type Scene,
  type SourceLanguage,
  type Transform,
} from './model.js';
import { opTag, type NodePatch, type Op, type OpTag } from './ops.js';

export const OP_ERRORS = [
  'pageNotFound',
  'nodeNotFound',
  'pageExists',
  'nodeExists',
  'indexOutOfRange',
  'reorderSetMismatch',
  'nodeKindMismatch',
  'invariant',
] as const;
export type OpErrorKind = (typeof OP_ERRORS)[number];

/** A refused op: kernel code `notFound` for the *NotFound kinds, else `malformedRequest`. */
export class SceneOpError extends AirlockError {
  constructor(
    readonly kind: OpErrorKind,
    readonly op: string,
    detail: string,
  ) {
    super(
      kind === 'pageNotFound' || kind === 'nodeNotFound' ? 'notFound' : 'malformedRequest',
      `${op} refused (${kind}): ${detail}; nothing was applied.`,
      { opError: kind, op },
    );
    this.name = 'SceneOpError';
  }
}

type Result = { state: Scene; inverse: Op };

export const sceneReducer: Reducer<Scene, Op> = { apply: applyOp };

/** The project's name and style changed; the inverse puts back what was there. */
function updateProjectMeta(
  scene: Scene,
  patch: Extract<Op, { updateProjectMeta: unknown }>['updateProjectMeta']['patch'],
): Result {
  const project = { ...scene.project, style: { ...scene.project.style } };
  const inverse: {
    name?: string;
    style?: { defaultFont?: string | null; sourceLanguage?: SourceLanguage | null };
  } = {};
  if (patch.name !== undefined) {
    inverse.name = project.name;
    project.name = patch.name;
  }
  if (patch.style !== undefined && patch.style.defaultFont !== undefined) {
    inverse.style = { defaultFont: project.style.defaultFont ?? null };
    if (patch.style.defaultFont === null) delete project.style.defaultFont;
    else project.style.defaultFont = patch.style.defaultFont;
  }
  if (patch.style !== undefined && patch.style.sourceLanguage !== undefined) {
    inverse.style = { ...inverse.style, sourceLanguage: project.style.sourceLanguage ?? null };
    if (patch.style.sourceLanguage === null) delete project.style.sourceLanguage;
    else project.style.sourceLanguage = patch.style.sourceLanguage;
  }
  return { state: { ...scene, project }, inverse: { updateProjectMeta: { patch: inverse } } };
}

export function applyOp(scene: Scene, op: Op): Result {
  const tag = opTag(op);
  const fail = (kind: OpErrorKind, detail: string): never => {
    throw new SceneOpError(kind, tag, detail);
  };
  const pageIndex = (id: string) => {
    const i = scene.pages.findIndex((p) => p.id === id);
    if (i < 0) fail('pageNotFound', `no page ${id}; read the scene (get_scene) for page ids`);
    return i;
  };
  const withPage = (i: number, page: Page): Scene => {
    const pages = scene.pages.slice();
    pages[i] = page;
    return { ...scene, pages };
  };

  if ('batch' in op) return applyBatch(scene, op.batch.ops, op.batch.label);

  if ('updateProjectMeta' in op) return updateProjectMeta(scene, op.updateProjectMeta.patch);

  if ('addPage' in op) {
    const { page, at = scene.pages.length } = op.addPage;
    if (scene.pages.some((p) => p.id === page.id)) fail('pageExists', `page ${page.id} exists`);
    if (at > scene.pages.length)
      fail('indexOutOfRange', `at ${at} is past the end (${scene.pages.length} pages)`);
    checkPage(page, tag);
    const pages = scene.pages.slice();
    pages.splice(at, 0, page);
    return { state: { ...scene, pages }, inverse: { removePage: { id: page.id } } };
  }

  if ('removePage' in op) {
    const i = pageIndex(op.removePage.id);
    const pages = scene.pages.slice();
    const [removed] = pages.splice(i, 1);
    return { state: { ...scene, pages }, inverse: { addPage: { page: removed!, at: i } } };
  }

  if ('updatePage' in op) {
    const i = pageIndex(op.updatePage.id);
    const page = { ...scene.pages[i]! };
    const { patch } = op.updatePage;
    const inverse: { name?: string; width?: number; height?: number } = {};
    for (const key of ['name', 'width', 'height'] as const) {
      if (patch[key] === undefined) continue;
      (inverse as Record<string, unknown>)[key] = page[key];
      (page as Record<string, unknown>)[key] = patch[key];
    }
    return {
      state: withPage(i, page),
      inverse: { updatePage: { id: page.id, patch: inverse } },
    };
  }

  if ('reorderPages' in op) {
    const { order } = op.reorderPages;
    const before = scene.pages.map((p) => p.id);
    sameSet(before, order, 'pages', tag);
    const byId = new Map(scene.pages.map((p) => [p.id, p]));
    return {
      state: { ...scene, pages: order.map((id) => byId.get(id)!) },
      inverse: { reorderPages: { order: before } },
    };
  }

  if ('addNode' in op) {
    const { node } = op.addNode;
    const i = pageIndex(op.addNode.page);
    const page = scene.pages[i]!;
    const at = op.addNode.at ?? page.nodes.length;
    if (page.nodes.some((n) => n.id === node.id))
      fail('nodeExists', `node ${node.id} exists in page ${page.id}`);
    if (at > page.nodes.length)
      fail('indexOutOfRange', `at ${at} is past the end (${page.nodes.length} nodes)`);
    const nodes = page.nodes.slice();
    nodes.splice(at, 0, node);
    const next = { ...page, nodes };
    checkInvariants(next, tag);
    return {
      state: withPage(i, next),
      inverse: { removeNode: { page: page.id, id: node.id } },
    };
  }

  if ('removeNode' in op) {
    const i = pageIndex(op.removeNode.page);
    const page = scene.pages[i]!;
    const n = nodeIndex(page, op.removeNode.id, tag);
    const nodes = page.nodes.slice();
    const [removed] = nodes.splice(n, 1);
    return {
      state: withPage(i, { ...page, nodes }),
      inverse: { addNode: { page: page.id, node: removed!, at: n } },
    };
  }

  if ('updateNode' in op) {
    const i = pageIndex(op.updateNode.page);
    const page = scene.pages[i]!;
    const n = nodeIndex(page, op.updateNode.id, tag);
    const { node, inverse } = patchNode(page.nodes[n]!, op.updateNode.patch, tag);
    const nodes = page.nodes.slice();
    nodes[n] = node;
    return {
      state: withPage(i, { ...page, nodes }),
      inverse: { updateNode: { page: page.id, id: node.id, patch: inverse } },
    };
  }

  // reorderNodes
  const { page: pageId, order } = (op as Extract<Op, { reorderNodes: unknown }>).reorderNodes;
  const i = pageIndex(pageId);
  const page = scene.pages[i]!;
  const before = page.nodes.map((x) => x.id);
  sameSet(before, order, 'nodes', tag);
  const byId = new Map(page.nodes.map((x) => [x.id, x]));
  return {
    state: withPage(i, { ...page, nodes: order.map((id) => byId.get(id)!) }),
    inverse: { reorderNodes: { page: pageId, order: before } },
  };
}

function applyBatch(scene: Scene, ops: Op[], label: string): Result {
  let state = scene;
  const inverses: Op[] = [];
  ops.forEach((op, k) => {
    try {
      const r = applyOp(state, op);
      state = r.state;
      inverses.unshift(r.inverse);
    } catch (error) {
      if (error instanceof SceneOpError) {
        throw new SceneOpError(
          error.kind,
          `batch '${label}' op ${k} (${error.op === 'batch' ? 'batch' : error.op})`,
          error.message
            .replace(/^.*?refused \(\w+\): /, '')
            .replace(/; nothing was applied\.$/, ''),
        );
      }
      throw error;
    }
  });
  return { state, inverse: { batch: { ops: inverses, label } } };
}

function nodeIndex(page: Page, id: string, tag: OpTag): number {
  const n = page.nodes.findIndex((x) => x.id === id);
  if (n < 0) throw new SceneOpError('nodeNotFound', tag, `no node ${id} in page ${page.id}`);
  return n;
}

function sameSet(before: string[], order: string[], what: string, tag: OpTag): void {
  const wanted = new Set(order);
  if (
    wanted.size !== order.length ||
    order.length !== before.length ||
    before.some((id) => !wanted.has(id))
  ) {
    throw new SceneOpError(
      'reorderSetMismatch',
      tag,
      `order must list each of the ${before.length} ${what} exactly once`,
    );
  }
}

function checkPage(page: Page, tag: OpTag): void {
  const seen = new Set<string>();
  for (const node of page.nodes) {
    if (seen.has(node.id))
      throw new SceneOpError('nodeExists', tag, `node ${node.id} appears twice in page ${page.id}`);
    seen.add(node.id);
  }
  checkInvariants(page, tag);
}

/** At most one source, inpainted and rendered image per page, one mask per role. */
export function checkInvariants(page: Page, tag: string): void {
  const seen = new Set<string>();
  for (const node of page.nodes) {
    let key: string | null = null;
    if ('image' in node.kind && node.kind.image.role !== 'custom')
      key = `${node.kind.image.role} image`;
    else if ('mask' in node.kind) key = `${node.kind.mask.role} mask`;
    if (key === null) continue;
    if (seen.has(key))
      throw new SceneOpError(
        'invariant',
        tag,
        `page ${page.id} already has a ${key}; update or remove it instead of adding another`,
      );
    seen.add(key);
  }
}

function patchNode(
  node: Node,
  patch: NodePatch,
  tag: OpTag,
): { node: Node; inverse: Record<string, unknown> } {
  const inverse: Record<string, unknown> = {};
  const next: Node = { ...node };
  if (patch.transform !== undefined) {
    inverse.transform = node.transform;
    next.transform = { ...node.transform, ...stripUndefined(patch.transform) } as Transform;
  }
  if (patch.visible !== undefined) {
    inverse.visible = node.visible;
    next.visible = patch.visible;
  }
  if (patch.data !== undefined) {
    const patchTag = Object.keys(patch.data)[0] as 'text' | 'image' | 'mask';
    const existing = kindTag(node);
    if (patchTag !== existing)
      throw new SceneOpError(
        'nodeKindMismatch',
        tag,
        `the patch is for a ${patchTag} node but node ${node.id} is a ${existing} node; remove it and add a new one instead`,
      );
    const current = (node.kind as Record<string, Record<string, unknown>>)[existing]!;
    const fields = (patch.data as Record<string, Record<string, unknown>>)[existing]!;
    const data: Record<string, unknown> = { ...current };
    const prev: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      prev[key] = current[key] ?? null;
      if (value === null) delete data[key];
      else data[key] = value;
    }
    next.kind = { [existing]: data } as Node['kind'];
    inverse.data = { [existing]: prev };
  }
  return { node: next, inverse };
}

const stripUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
