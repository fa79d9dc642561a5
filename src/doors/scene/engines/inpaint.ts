/**
 * Inpainting of a mask (text pixels) only: no pixel outside the mask
 * changes. Each connected piece of the mask is filled by copying a patch
 * from elsewhere on the page whose surroundings match the piece's
 * surroundings (exemplar search over offsets, scored on a ring of known
 * pixels around the piece), so screentone and hatching continue; when no
 * patch matches well, it is filled by diffusion from its border inward
 * (onion peel, inverse-distance weights), which suits flat and gradient
 * areas.
 */
import { floodFill, type Mask } from './pixels.js';

const RING_PX = 3;
const MAX_RING_SAMPLES = 160;
const MAX_SHIFT = 72;
/** Mean absolute difference per channel on the ring under which a patch is used. */
const PATCH_ACCEPT = 10;

/** Fills `mask` pixels of `rgba` in place. */
export function inpaint(rgba: Uint8ClampedArray, width: number, height: number, mask: Mask): void {
  const known = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) known[i] = mask[i] ? 0 : 1;
  const seen = new Uint8Array(mask.length);
  for (let seed = 0; seed < mask.length; seed++) {
    if (!mask[seed] || seen[seed]) continue;
    const piece = floodFill(width, height, seed, (i) => !!mask[i], seen);
    if (!copyPatch(rgba, width, height, mask, piece)) diffuse(rgba, width, height, known, piece);
    for (const i of piece) known[i] = 1;
  }
}

/** Known pixels within RING_PX of the piece. */
function ringOf(width: number, height: number, mask: Mask, piece: number[]): number[] {
  const ring = new Set<number>();
  for (const i of piece) {
    const x = i % width;
    const y = (i - x) / width;
    for (let dy = -RING_PX; dy <= RING_PX; dy++)
      for (let dx = -RING_PX; dx <= RING_PX; dx++) {
        const xx = x + dx;
        const yy = y + dy;
        if (xx < 0 || yy < 0 || xx >= width || yy >= height) continue;
        const j = yy * width + xx;
        if (!mask[j]) ring.add(j);
      }
  }
  return [...ring];
}

function copyPatch(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  mask: Mask,
  piece: number[],
): boolean {
  const ring = ringOf(width, height, mask, piece);
  if (!ring.length) return false;
  const stride = Math.max(1, Math.ceil(ring.length / MAX_RING_SAMPLES));
  const sample = ring.filter((_, k) => k % stride === 0);
  const sx = sample.map((i) => i % width);
  const sy = sample.map((i) => Math.floor(i / width));
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const i of piece) {
    const x = i % width;
    const y = (i - x) / width;
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  const reach = Math.min(MAX_SHIFT, Math.max(x1 - x0, y1 - y0) + 2 * RING_PX + 8);
  const limit = PATCH_ACCEPT * 3 * sample.length;
  const candidates: { dx: number; dy: number; cost: number }[] = [];
  let worstKept = limit;
  for (let dy = -reach; dy <= reach; dy++) {
    if (y0 - RING_PX + dy < 0 || y1 + RING_PX + dy >= height) continue;
    for (let dx = -reach; dx <= reach; dx++) {
      if (!dx && !dy) continue;
      if (x0 - RING_PX + dx < 0 || x1 + RING_PX + dx >= width) continue;
      let cost = 0;
      for (let k = 0; k < sample.length && cost < worstKept; k++) {
        const a = sample[k]! * 4;
        const b = ((sy[k]! + dy) * width + sx[k]! + dx) * 4;
        cost +=
          Math.abs(rgba[a]! - rgba[b]!) +
          Math.abs(rgba[a + 1]! - rgba[b + 1]!) +
          Math.abs(rgba[a + 2]! - rgba[b + 2]!);
      }
      if (cost >= worstKept) continue;
      candidates.push({ dx, dy, cost });
      candidates.sort((p, q) => p.cost - q.cost);
      if (candidates.length > 8) candidates.pop();
      if (candidates.length === 8) worstKept = candidates[7]!.cost;
    }
  }
  // The best candidate whose source pixels are all known (outside the mask).
  const shift = candidates.find(({ dx, dy }) => piece.every((i) => !mask[i + dy * width + dx]));
  if (!shift) return false;
  const offset = shift.dy * width + shift.dx;
  for (const i of piece) {
    const j = i + offset;
    for (let c = 0; c < 4; c++) rgba[i * 4 + c] = rgba[j * 4 + c]!;
  }
  return true;
}

/** Onion peel: each pass fills the piece's pixels that touch known ones. */
function diffuse(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  known: Uint8Array,
  piece: number[],
): void {
  let left = piece.filter((i) => !known[i]);
  const local = known.slice();
  while (left.length) {
    const filled: number[] = [];
    const rest: number[] = [];
    for (const i of left) {
      const x = i % width;
      const y = (i - x) / width;
      const acc = [0, 0, 0, 0];
      let weight = 0;
      for (let dy = -2; dy <= 2; dy++)
        for (let dx = -2; dx <= 2; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if ((!dx && !dy) || xx < 0 || yy < 0 || xx >= width || yy >= height) continue;
          const j = yy * width + xx;
          if (!local[j]) continue;
          const w = 1 / Math.hypot(dx, dy);
          for (let c = 0; c < 4; c++) acc[c]! += rgba[j * 4 + c]! * w;
          weight += w;
        }
      if (weight) {
        for (let c = 0; c < 4; c++) rgba[i * 4 + c] = Math.round(acc[c]! / weight);
        filled.push(i);
      } else rest.push(i);
    }
    if (!filled.length) break; // nothing known around: leave as is
    for (const i of filled) local[i] = 1;
    left = rest;
  }
}
