/**
 * Layout of detected text: its direction (from the ink's projection
 * profiles) and the reading order of regions (rows top to bottom; within a
 * row right to left for manga, left to right otherwise).
 */
import type { Box, Mask } from './pixels.js';
import type { Direction } from './ocr-models.js';

/** Runs of non-empty bins in a projection, merging gaps narrower than `gap`. */
function runs(profile: number[], gap: number): [number, number][] {
  const out: [number, number][] = [];
  let start = -1;
  let lastSet = -Infinity;
  profile.forEach((v, i) => {
    if (!v) return;
    if (start < 0) start = i;
    else if (i - lastSet > gap) {
      out.push([start, lastSet + 1]);
      start = i;
    }
    lastSet = i;
  });
  if (start >= 0) out.push([start, lastSet + 1]);
  return out;
}

/**
 * Vertical when the ink splits into columns that are long for their width
 * more than into rows that are long for their height. `prefer` decides ties
 * (a single glyph).
 */
export function inkDirection(ink: Mask, width: number, box: Box, prefer: Direction): Direction {
  const w = box.x1 - box.x0;
  const h = box.y1 - box.y0;
  if (w <= 0 || h <= 0) return prefer;
  const cols = new Array<number>(w).fill(0);
  const rows = new Array<number>(h).fill(0);
  for (let y = box.y0; y < box.y1; y++)
    for (let x = box.x0; x < box.x1; x++)
      if (ink[y * width + x]) {
        cols[x - box.x0]!++;
        rows[y - box.y0]!++;
      }
  const gap = Math.max(3, Math.round(Math.min(w, h) * 0.08));
  const elongation = (spans: [number, number][], across: number) => {
    if (!spans.length) return 0;
    const thickness = spans.reduce((s, [a, b]) => s + (b - a), 0) / spans.length;
    return across / Math.max(1, thickness);
  };
  const colScore = elongation(runs(cols, gap), h);
  const rowScore = elongation(runs(rows, gap), w);
  if (Math.abs(colScore - rowScore) < 0.5) return prefer;
  return colScore > rowScore ? 'vertical' : 'horizontal';
}

/** Reading order: rows of regions whose vertical extents overlap by half, then by x. */
export function readingOrder<T extends { box: Box }>(regions: T[], rightToLeft: boolean): T[] {
  const sorted = [...regions].sort((a, b) => a.box.y0 - b.box.y0);
  const rows: { y0: number; y1: number; items: T[] }[] = [];
  for (const r of sorted) {
    const h = r.box.y1 - r.box.y0;
    const row = rows.find(
      (w) => Math.min(w.y1, r.box.y1) - Math.max(w.y0, r.box.y0) >= 0.5 * Math.min(h, w.y1 - w.y0),
    );
    if (row) {
      row.items.push(r);
      row.y0 = Math.min(row.y0, r.box.y0);
      row.y1 = Math.max(row.y1, r.box.y1);
    } else rows.push({ y0: r.box.y0, y1: r.box.y1, items: [r] });
  }
  return rows.flatMap((row) =>
    row.items.sort((a, b) => (rightToLeft ? b.box.x1 - a.box.x1 : a.box.x0 - b.box.x0)),
  );
}

/**
 * Lines of one block in reading order: vertical columns by their right
 * edge, right to left (tesseract may hand a block's columns back in
 * another order); horizontal lines as read.
 */
export function columnOrder<L extends { bbox: Box }>(lines: L[], direction: Direction): L[] {
  return direction === 'vertical' ? [...lines].sort((a, b) => b.bbox.x1 - a.bbox.x1) : lines;
}
