/** Shared by the engines that write a page image (fill, renderer). */
import { randomUUID } from 'node:crypto';
import type { Node, Page, Transform } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { imageNode } from '../files/images.js';

/** Ops that make `hash` the page's image of `role`: update the existing node, or add one. */
export function putImageOps(
  page: Page,
  role: 'inpainted' | 'rendered',
  hash: string,
  width: number,
  height: number,
): Op[] {
  const existing = imageNode(page, role);
  if (existing) {
    return [
      {
        updateNode: {
          page: page.id,
          id: existing.node.id,
          patch: { data: { image: { blob: hash, naturalWidth: width, naturalHeight: height } } },
        },
      },
    ];
  }
  const node: Node = {
    id: randomUUID(),
    transform: { x: 0, y: 0, width: page.width, height: page.height, rotationDeg: 0 },
    visible: true,
    kind: { image: { role, blob: hash, opacity: 1, naturalWidth: width, naturalHeight: height } },
  };
  // Inpainted sits right above the source; rendered above every image.
  const images = page.nodes.map((n, i) => ('image' in n.kind ? i : -1)).filter((i) => i >= 0);
  const source = page.nodes.findIndex((n) => 'image' in n.kind && n.kind.image.role === 'source');
  const at = role === 'inpainted' ? source + 1 : images.length ? images[images.length - 1]! + 1 : 0;
  return [{ addNode: { page: page.id, node, at } }];
}

/** The text nodes an engine works on: all of them, or those listed in `textNodeIds`. */
export function textNodes(page: Page, only?: string[]) {
  return page.nodes.flatMap((n) =>
    'text' in n.kind && (!only || only.includes(n.id)) ? [{ node: n, text: n.kind.text }] : [],
  );
}

/** Integer pixel rectangle of a transform, clamped to the image. */
export function pixelRect(t: Transform, width: number, height: number) {
  const x0 = Math.max(0, Math.floor(t.x));
  const y0 = Math.max(0, Math.floor(t.y));
  const x1 = Math.min(width, Math.ceil(t.x + t.width));
  const y1 = Math.min(height, Math.ceil(t.y + t.height));
  return { x0, y0, x1, y1, w: Math.max(0, x1 - x0), h: Math.max(0, y1 - y0) };
}

/** The page's mask node of that role, or null. */
export function maskNode(page: Page, role: 'segment' | 'bubble') {
  for (const node of page.nodes)
    if ('mask' in node.kind && node.kind.mask.role === role) return { node, mask: node.kind.mask };
  return null;
}

/** Ops that make `hash` the page's mask of `role` (one per role): update it, or add it on top of the images. */
export function putMaskOps(page: Page, role: 'segment' | 'bubble', hash: string): Op[] {
  const existing = maskNode(page, role);
  if (existing)
    return [
      {
        updateNode: {
          page: page.id,
          id: existing.node.id,
          patch: { data: { mask: { blob: hash } } },
        },
      },
    ];
  const node: Node = {
    id: randomUUID(),
    transform: { x: 0, y: 0, width: page.width, height: page.height, rotationDeg: 0 },
    visible: false,
    kind: { mask: { role, blob: hash } },
  };
  const images = page.nodes.map((n, i) => ('image' in n.kind ? i : -1)).filter((i) => i >= 0);
  return [
    { addNode: { page: page.id, node, at: images.length ? images[images.length - 1]! + 1 : 0 } },
  ];
}
