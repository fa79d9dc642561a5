/**
 * Speech-bubble segmentation from the page's own structure: a bubble is a
 * bright region, bounded by a dark outline, that does not touch the page
 * edge, is of bubble size, and holds a little dark ink (the text) as holes.
 * Screentone (thousands of holes), panel backgrounds (too large) and blank
 * shapes (no ink) are refused. Each bubble comes with its filled area (the
 * region plus its holes) and its text mask (the holes' pixels).
 */
import { boxOf, floodFill, type Box, type Mask } from './pixels.js';

/** Luma at or over this is "bright" (bubble paper). */
export const BRIGHT = 235;
const MIN_AREA_FRACTION = 0.002;
const MAX_AREA_FRACTION = 0.15;
const MAX_HOLES = 180;
const MIN_INK_PX = 30;
const MIN_FILL_RATIO = 0.35;
const OUTLINE_REACH = 3;
const OUTLINE_DARK = 110;
/** Share of the edge (text holes included) that must be dark. */
const OUTLINED_SHARE = 0.75;

export interface Bubble {
  /** Filled bubble area (region and holes), page-sized mask. */
  area: Mask;
  /** Text ink inside the bubble (the holes), page-sized mask. */
  ink: Mask;
  /** Box of the bubble area. */
  box: Box;
  /** Box of the ink. */
  inkBox: Box;
  inkPixels: number;
}

export function findBubbles(gray: Uint8Array, width: number, height: number): Bubble[] {
  const n = width * height;
  const bright = (i: number) => gray[i]! >= BRIGHT;
  const seen = new Uint8Array(n);
  const out: Bubble[] = [];
  const minArea = MIN_AREA_FRACTION * n;
  const maxArea = MAX_AREA_FRACTION * n;
  for (let seed = 0; seed < n; seed++) {
    if (seen[seed] || !bright(seed)) continue;
    const region = floodFill(width, height, seed, bright, seen, maxArea);
    if (region.length < minArea || region.length > maxArea) continue;
    const box = boxOf(region, width);
    if (box.x0 === 0 || box.y0 === 0 || box.x1 === width || box.y1 === height) continue;
    if (!outlined(gray, region, width, height)) continue;
    const bubble = withHoles(region, box, width, height);
    if (bubble) out.push(bubble);
  }
  return out;
}

/**
 * Whether a dark line bounds the region: most pixels just outside its edge
 * have dark ink within OUTLINE_REACH pixels (a bright patch of a gradient
 * fades out instead).
 */
function outlined(gray: Uint8Array, region: number[], width: number, height: number): boolean {
  const inRegion = new Set(region);
  let edge = 0;
  let dark = 0;
  for (const i of region) {
    const x = i % width;
    const y = (i - x) / width;
    for (const [dx, dy] of [
      [1, 0],
      [-1, 0],
      [0, 1],
      [0, -1],
    ] as const) {
      const xx = x + dx;
      const yy = y + dy;
      if (xx < 0 || yy < 0 || xx >= width || yy >= height) continue;
      const j = yy * width + xx;
      if (inRegion.has(j)) continue;
      edge++;
      let found = false;
      for (let k = 0; k <= OUTLINE_REACH && !found; k++) {
        const px = xx + dx * k;
        const py = yy + dy * k;
        if (
          px >= 0 &&
          py >= 0 &&
          px < width &&
          py < height &&
          gray[py * width + px]! < OUTLINE_DARK
        )
          found = true;
      }
      if (found) dark++;
    }
  }
  return edge > 0 && dark / edge >= OUTLINED_SHARE;
}

/** The region's holes (non-region pixels not connected to its box's border). */
function withHoles(region: number[], box: Box, width: number, height: number): Bubble | null {
  const bw = box.x1 - box.x0 + 2;
  const bh = box.y1 - box.y0 + 2;
  // Local grid with a one-pixel frame, so "outside" is connected around the region.
  const local = new Uint8Array(bw * bh);
  for (const i of region) {
    const x = (i % width) - box.x0 + 1;
    const y = Math.floor(i / width) - box.y0 + 1;
    local[y * bw + x] = 1;
  }
  const seen = new Uint8Array(bw * bh);
  floodFill(bw, bh, 0, (j) => !local[j], seen);
  const area = new Uint8Array(width * height);
  const ink = new Uint8Array(width * height);
  let holes = 0;
  let inkPixels = 0;
  const holeSeen = new Uint8Array(bw * bh);
  for (let j = 0; j < bw * bh; j++) {
    if (local[j] || seen[j]) continue;
    if (!holeSeen[j]) {
      holes++;
      if (holes > MAX_HOLES) return null;
      floodFill(bw, bh, j, (k) => !local[k] && !seen[k], holeSeen);
    }
  }
  let filled = 0;
  for (let y = 1; y < bh - 1; y++)
    for (let x = 1; x < bw - 1; x++) {
      const j = y * bw + x;
      if (seen[j]) continue;
      const i = (y - 1 + box.y0) * width + (x - 1 + box.x0);
      area[i] = 1;
      filled++;
      if (!local[j]) {
        ink[i] = 1;
        inkPixels++;
      }
    }
  void height;
  if (inkPixels < MIN_INK_PX) return null;
  if (filled / ((box.x1 - box.x0) * (box.y1 - box.y0)) < MIN_FILL_RATIO) return null;
  // Ink that covers most of the area is artwork, not lettering.
  if (inkPixels > filled * 0.5) return null;
  const inkIdx: number[] = [];
  for (let i = 0; i < ink.length; i++) if (ink[i]) inkIdx.push(i);
  return { area, ink, box, inkBox: boxOf(inkIdx, width), inkPixels };
}

/**
 * The bubble around a text line that `findBubbles` missed because its
 * outline is faint or absent (a white balloon on a painted panel): the
 * bright region reached from the line's own background, kept when it is
 * closed (it does not touch the page edge), of bubble size, and holds the
 * line. Null when there is none.
 */
export function bubbleAround(
  gray: Uint8Array,
  width: number,
  height: number,
  line: Box,
  seen: Uint8Array,
): Bubble | null {
  const n = width * height;
  const bright = (i: number) => gray[i]! >= BRIGHT;
  // A bright pixel of the line's background: the first one along its middle row.
  const y = Math.floor((line.y0 + line.y1) / 2);
  let seed = -1;
  for (let x = Math.floor(line.x0); x < line.x1 && seed < 0; x++)
    if (bright(y * width + x) && !seen[y * width + x]) seed = y * width + x;
  if (seed < 0) return null;
  const region = floodFill(width, height, seed, bright, seen, MAX_AREA_FRACTION * n);
  if (region.length < MIN_AREA_FRACTION * n || region.length > MAX_AREA_FRACTION * n) return null;
  const box = boxOf(region, width);
  if (box.x0 === 0 || box.y0 === 0 || box.x1 >= width - 1 || box.y1 >= height - 1) return null;
  if (line.x0 < box.x0 || line.x1 > box.x1 + 1 || line.y0 < box.y0 || line.y1 > box.y1 + 1)
    return null;
  return withHoles(region, box, width, height);
}
