/**
 * `wu_snapshot {delta: true}`: only what changed on the page since its last
 * snapshot of the same part (page, app or selector), by element ref (an
 * element keeps its ref across snapshots). A node's own content is its role,
 * name, states and text children; its element children are entries of their
 * own. The first snapshot of a part, or one after the URL changed, has
 * nothing to compare with and is answered whole.
 */
import type { A11yNode } from './a11y.js';

/** A node as a delta entry: its own fields and text children, element children as refs. */
export interface FlatNode {
  ref: string;
  parent: string | null;
  node: A11yNode;
}

export interface SnapshotDelta {
  added: FlatNode[];
  changed: FlatNode[];
  removed: string[];
  unchanged: number;
}

interface Base {
  url: string;
  at: number;
  nodes: Map<string, { parent: string | null; text: string }>;
}

/** The last snapshot of each part of the page, by scope key. */
const bases = new Map<string, Base>();

/** Flattens a tree into its element nodes (text leaves stay with their parent). */
export function flatten(tree: A11yNode[]): FlatNode[] {
  const out: FlatNode[] = [];
  const visit = (nodes: A11yNode[], parent: string | null) => {
    for (const n of nodes) {
      if (!n.ref) {
        // An element without a ref (none today) is folded into its parent's text.
        if (n.children) visit(n.children, parent);
        continue;
      }
      const own: A11yNode = { ...n };
      const kids = n.children ?? [];
      const texts = kids.filter((k) => !k.ref && !k.children);
      if (texts.length > 0) own.children = texts;
      else delete own.children;
      out.push({ ref: n.ref, parent, node: own });
      visit(
        kids.filter((k) => k.ref || k.children),
        n.ref,
      );
    }
  };
  visit(tree, null);
  return out;
}

/**
 * Records `tree` as the part's latest snapshot and returns what changed
 * since the one before, or null when there is none to compare with (first
 * snapshot of the part, or the page's URL changed).
 */
export function diffAndRemember(
  scope: string,
  url: string,
  tree: A11yNode[],
  now = Date.now(),
): { delta: SnapshotDelta; since: number } | null {
  const flat = flatten(tree);
  const nodes = new Map(
    flat.map((f) => [f.ref, { parent: f.parent, text: JSON.stringify(f.node) }] as const),
  );
  const before = bases.get(scope);
  bases.set(scope, { url, at: now, nodes });
  if (!before || before.url !== url) return null;
  const delta: SnapshotDelta = { added: [], changed: [], removed: [], unchanged: 0 };
  for (const f of flat) {
    const old = before.nodes.get(f.ref);
    if (!old) delta.added.push(f);
    else if (old.text !== nodes.get(f.ref)!.text || old.parent !== f.parent) delta.changed.push(f);
    else delta.unchanged++;
  }
  for (const ref of before.nodes.keys()) if (!nodes.has(ref)) delta.removed.push(ref);
  return { delta, since: before.at };
}

/** Forgets every part's snapshot (a new page load starts fresh anyway). */
export function forgetSnapshots(): void {
  bases.clear();
}
