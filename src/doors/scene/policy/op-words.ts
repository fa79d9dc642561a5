/**
 * A scene op as the owner reads it on an ask's card (issue 27): each single
 * op in words with what it touches — `remove text "Where are you going?"
 * from page 3 "Chapter 1"`, `remove page 4 "p4" (6 text nodes)` — worked
 * out step by step (an op inside a batch is described against the scene the
 * ops before it left), the totals, and the pages touched before and after.
 * The list is bounded: past MAX_LINES a `… N more` line.
 */
import { kindTag, textOf, type Node, type Page, type Scene } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { applyOp } from '../model/reducer.js';

/** At most this many op lines on a card; the rest is one "… N more" line. */
export const MAX_LINES = 20;

/** The single ops of `ops`, batches opened however deeply nested. */
function flat(ops: readonly Op[]): Op[] {
  return ops.flatMap((op) => ('batch' in op ? flat(op.batch.ops) : [op]));
}

const quoted = (text: string, max = 40) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return JSON.stringify(chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join(''));
};

/** `page 3 "Chapter 1"`, or the id of a page the scene does not hold. */
function pageWords(scene: Scene, id: string): string {
  const i = scene.pages.findIndex((p) => p.id === id);
  return i < 0 ? `page ${id}` : `page ${i + 1} ${quoted(scene.pages[i]!.name)}`;
}

/** `text "Hello"`, `image node`, `mask node`. */
function nodeWords(node: Node | undefined, id: string): string {
  if (!node) return `node ${id}`;
  const text = textOf(node);
  const shown = text?.translation || text?.text;
  return kindTag(node) === 'text'
    ? `text ${shown ? quoted(shown) : '(empty)'}`
    : `${kindTag(node)} node`;
}

/** `6 text nodes`, `2 text nodes, 1 image node`. */
function nodeCounts(page: Page): string {
  if (page.nodes.length === 0) return 'no nodes';
  const counts = new Map<string, number>();
  for (const n of page.nodes) counts.set(kindTag(n), (counts.get(kindTag(n)) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k} node${n === 1 ? '' : 's'}`).join(', ');
}

const patchKeys = (patch: object) => Object.keys(patch).join(', ');

/** What a node patch changes: `translation → "Hi"`, `visible → false`, `position`. */
function nodePatchWords(patch: {
  transform?: object;
  visible?: boolean;
  data?: Record<string, Record<string, unknown>>;
}): string {
  const parts: string[] = [];
  if (patch.transform) parts.push('position/size');
  if (patch.visible !== undefined) parts.push(patch.visible ? 'show' : 'hide');
  for (const data of Object.values(patch.data ?? {}))
    for (const [key, value] of Object.entries(data))
      parts.push(
        typeof value === 'string'
          ? `${key} → ${quoted(value)}`
          : value === null
            ? `clear ${key}`
            : key,
      );
  return parts.join(', ') || 'nothing';
}

/** One single op in words, against the scene before it. */
export function opWords(scene: Scene, op: Op): string {
  const page = (id: string) => scene.pages.find((p) => p.id === id);
  if ('removeNode' in op) {
    const { page: pid, id } = op.removeNode;
    return `remove ${nodeWords(
      page(pid)?.nodes.find((n) => n.id === id),
      id,
    )} from ${pageWords(scene, pid)}`;
  }
  if ('removePage' in op) {
    const p = page(op.removePage.id);
    return `remove ${pageWords(scene, op.removePage.id)}${p ? ` (${nodeCounts(p)})` : ''}`;
  }
  if ('addNode' in op)
    return `add ${nodeWords(op.addNode.node, op.addNode.node.id)} to ${pageWords(scene, op.addNode.page)}`;
  if ('updateNode' in op) {
    const { page: pid, id, patch } = op.updateNode;
    const node = page(pid)?.nodes.find((n) => n.id === id);
    return `change ${nodeWords(node, id)} on ${pageWords(scene, pid)}: ${nodePatchWords(patch as never)}`;
  }
  if ('reorderNodes' in op) return `reorder the nodes of ${pageWords(scene, op.reorderNodes.page)}`;
  if ('addPage' in op)
    return `add page ${quoted(op.addPage.page.name)} (${nodeCounts(op.addPage.page)})${op.addPage.at !== undefined ? ` at position ${op.addPage.at + 1}` : ''}`;
  if ('updatePage' in op)
    return `change ${pageWords(scene, op.updatePage.id)}: ${patchKeys(op.updatePage.patch)}`;
  if ('reorderPages' in op) return `reorder the ${op.reorderPages.order.length} pages`;
  if ('updateProjectMeta' in op)
    return `change the project's ${patchKeys(op.updateProjectMeta.patch)}${op.updateProjectMeta.patch.name !== undefined ? ` (name → ${quoted(op.updateProjectMeta.patch.name)})` : ''}`;
  return 'batch';
}

export interface OpsInWords {
  /** One line per single op, at most MAX_LINES, then `… N more`. */
  lines: string[];
  /** `3 ops on 2 pages: 1 page removed, 2 nodes removed`. */
  totals: string;
  /** The existing pages the ops touch, as they are before and would be after (null: removed). */
  pages: { id: string; before: Page; after: Page | null }[];
}

/**
 * `ops` in words against `scene`, applied one by one. An op the scene
 * refuses stops the walk (the door's dry run refuses the call before the
 * owner is asked, so this is only a guard).
 */
export function opsInWords(scene: Scene, ops: readonly Op[]): OpsInWords {
  const singles = flat(ops);
  const lines: string[] = [];
  const touched = new Set<string>();
  let state = scene;
  let pagesRemoved = 0;
  let nodesRemoved = 0;
  let nodesAdded = 0;
  for (const op of singles) {
    lines.push(opWords(state, op));
    for (const value of Object.values(op) as Record<string, unknown>[]) {
      const id =
        typeof value.page === 'string'
          ? value.page
          : 'removePage' in op || 'updatePage' in op
            ? String(value.id)
            : null;
      if (id && scene.pages.some((p) => p.id === id)) touched.add(id);
    }
    if ('removePage' in op) pagesRemoved++;
    if ('removeNode' in op) nodesRemoved++;
    if ('addNode' in op) nodesAdded++;
    try {
      state = applyOp(state, op).state;
    } catch {
      break;
    }
  }
  const shown =
    lines.length > MAX_LINES
      ? [...lines.slice(0, MAX_LINES), `… ${lines.length - MAX_LINES} more`]
      : lines;
  const parts = [
    pagesRemoved ? `${pagesRemoved} page${pagesRemoved === 1 ? '' : 's'} removed` : null,
    nodesRemoved ? `${nodesRemoved} node${nodesRemoved === 1 ? '' : 's'} removed` : null,
    nodesAdded ? `${nodesAdded} node${nodesAdded === 1 ? '' : 's'} added` : null,
  ].filter((p) => p !== null);
  const totals = `${singles.length} op${singles.length === 1 ? '' : 's'} on ${touched.size} existing page${touched.size === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
  const pages = [...touched].map((id) => ({
    id,
    before: scene.pages.find((p) => p.id === id)!,
    after: state.pages.find((p) => p.id === id) ?? null,
  }));
  return { lines: shown, totals, pages };
}
