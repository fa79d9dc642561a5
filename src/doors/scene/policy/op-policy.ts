/**
 * What the owner's policy reads of scene ops (authority.md §3): their
 * effect, their targets and a summary a person can judge — for `apply`, and
 * for undo and redo, which are decided by the ops they revert or replay
 * (issue 24): undoing an added page removes it, so it is destructive and a
 * rule on `remove_page` applies to it.
 */
import { createHash } from 'node:crypto';
import type { Effect } from '../../../kernel/index.js';
import { kindTag, textOf, type Scene } from '../model/model.js';
import { opTag, type Op, type OpTag } from '../model/ops.js';

/**
 * An op that removes a page or node (also inside a batch) is `destructive`:
 * it takes content away, even though undo can bring it back. Other ops are
 * `write`.
 */
const REMOVING: ReadonlySet<OpTag> = new Set(['removePage', 'removeNode']);

/** The single ops of `ops`, batches opened however deeply nested. */
function flat(ops: readonly Op[]): Op[] {
  return ops.flatMap((op) => ('batch' in op ? flat(op.batch.ops) : [op]));
}

export function opsEffect(ops: readonly Op[]): Effect {
  return flat(ops).some((op) => REMOVING.has(opTag(op))) ? 'destructive' : 'write';
}

export const opEffect = (op: Op): Effect => opsEffect([op]);

/** `addNode` → `add_node`: the op kinds policy targets name (authority.md §3). */
const snake = (tag: string) => tag.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The policy's targets for ops: one per op kind, batches opened — a batch is
 * its parts, so a rule on `remove_page` sees a page removal inside one, and a
 * 15-minute approval covers only this set of kinds (`targetsAre: 'parts'`).
 */
export function opsTargets(ops: readonly Op[]): string[] {
  return [...new Set(flat(ops).map((op) => snake(opTag(op))))];
}

export const opTargets = (op: Op): string[] => opsTargets([op]);

/** `add_node`, or `batch "label": remove_node ×2, add_node`. */
export function opSummary(op: Op): string {
  if (!('batch' in op)) return snake(opTag(op));
  return `batch${op.batch.label ? ` "${op.batch.label}"` : ''}: ${kindCounts(op.batch.ops)}`;
}

/** `remove_page ×3, update_node`: the kinds of single ops, counted. */
export function kindCounts(ops: readonly Op[]): string {
  const counts = new Map<string, number>();
  for (const op of flat(ops)) {
    const kind = snake(opTag(op));
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ');
}

/**
 * What `ops` would remove from `scene`, one line each as the owner
 * recognises it: `page "cover" (3 nodes)`, `text node "Hello…" on page
 * "cover"`. Something the scene does not hold yet (added earlier in the same
 * batch) is named by id. The owner's ask card shows the list as one line.
 */
export function removalsOf(scene: Scene, ops: readonly Op[]): string[] {
  const removals: string[] = [];
  const quoted = (text: string, max = 40) =>
    JSON.stringify(text.length > max ? `${text.slice(0, max)}…` : text);
  for (const op of flat(ops)) {
    if ('removePage' in op) {
      const page = scene.pages.find((p) => p.id === op.removePage.id);
      removals.push(
        page
          ? `page ${quoted(page.name)} (${page.nodes.length} node${page.nodes.length === 1 ? '' : 's'})`
          : `page ${op.removePage.id}`,
      );
    } else if ('removeNode' in op) {
      const { page: pageId, id } = op.removeNode;
      const page = scene.pages.find((p) => p.id === pageId);
      const node = page?.nodes.find((n) => n.id === id);
      const text = node ? textOf(node)?.text : undefined;
      const what = node ? `${kindTag(node)} node${text ? ` ${quoted(text)}` : ''}` : `node ${id}`;
      removals.push(`${what} on page ${page ? quoted(page.name) : pageId}`);
    }
  }
  return removals;
}

/** The existing pages the ops touch: removed, updated, or holding a node they change. */
function pagesTouched(ops: readonly Op[]): string[] {
  const ids = new Set<string>();
  for (const op of flat(ops)) {
    for (const value of Object.values(op) as Record<string, unknown>[]) {
      if (typeof value.page === 'string') ids.add(value.page);
      else if ('removePage' in op || 'updatePage' in op) ids.add(String(value.id));
    }
  }
  return [...ids];
}

/**
 * What the owner judges of an op (issue 27): each existing page it touches,
 * by name and a short digest of its content (`"cover"@3f9a1c2b`). An
 * approved op runs only while these are unchanged; after another edit of
 * those pages the owner is asked again.
 */
export function observedPages(scene: Scene, ops: readonly Op[]): string | undefined {
  const parts = pagesTouched(ops).flatMap((id) => {
    const page = scene.pages.find((p) => p.id === id);
    if (!page) return [];
    const digest = createHash('sha256').update(JSON.stringify(page)).digest('hex').slice(0, 8);
    return [`page ${JSON.stringify(page.name)}@${digest}`];
  });
  return parts.length > 0 ? parts.join(', ') : undefined;
}

/**
 * The one existing page the ops act on, as a 15-minute approval may be
 * narrowed to it (`page "cover" <id>`); null when they touch none or more
 * than one (issue 27).
 */
export function pageSubject(scene: Scene, ops: readonly Op[]): string | null {
  const ids = pagesTouched(ops);
  if (ids.length !== 1) return null;
  const page = scene.pages.find((p) => p.id === ids[0]);
  return page ? `page ${JSON.stringify(page.name)} ${page.id}` : null;
}
