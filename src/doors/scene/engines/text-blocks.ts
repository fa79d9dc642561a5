/**
 * Text lines into blocks (issue 32 item 2), before OCR, fill and render:
 * every line whose centre lies in one speech bubble belongs to that
 * bubble's one block; lines outside bubbles join when they share an
 * orientation, lie within one line thickness of each other across the
 * reading direction, overlap along it (aligned) and are of a like size.
 * A square line (one glyph) takes the orientation of the block it joins,
 * else the language's main direction.
 */
import type { Bubble } from './bubbles.js';
import type { Direction } from './ocr-models.js';
import type { Box } from './pixels.js';
import type { TextLine } from './text-lines.js';

export interface TextBlock {
  box: Box;
  lines: Box[];
  direction: Direction;
  /** The bubble holding the block, or null (a caption, title, name tag or sound effect). */
  bubble: Bubble | null;
  /** Mean detection score of its lines (0–1). */
  score: number;
}

export const union = (boxes: Box[]): Box =>
  boxes.reduce((a, b) => ({
    x0: Math.min(a.x0, b.x0),
    y0: Math.min(a.y0, b.y0),
    x1: Math.max(a.x1, b.x1),
    y1: Math.max(a.y1, b.y1),
  }));

const square = (b: Box) => {
  const w = b.x1 - b.x0;
  const h = b.y1 - b.y0;
  return h <= 1.5 * w && w <= 1.5 * h;
};

/** A line's thickness across its reading direction. */
export const thicknessOf = (b: Box, d: Direction) => (d === 'vertical' ? b.x1 - b.x0 : b.y1 - b.y0);

function directionOf(lines: TextLine[], prefer: Direction): Direction {
  let vertical = 0;
  let horizontal = 0;
  for (const l of lines) {
    if (square(l.box)) continue;
    if (l.vertical) vertical++;
    else horizontal++;
  }
  if (vertical === horizontal) return prefer;
  return vertical > horizontal ? 'vertical' : 'horizontal';
}

/** Whether two lines (or a line and a block) belong together outside bubbles. */
function near(a: Box, b: Box, d: Direction): boolean {
  const ta = thicknessOf(a, d);
  const tb = thicknessOf(b, d);
  const thick = Math.min(ta, tb);
  if (Math.max(ta, tb) > 1.6 * thick) return false;
  const [a0, a1, b0, b1] = d === 'vertical' ? [a.x0, a.x1, b.x0, b.x1] : [a.y0, a.y1, b.y0, b.y1];
  const gap = Math.max(a0, b0) - Math.min(a1, b1);
  if (gap > thick) return false;
  const [p0, p1, q0, q1] = d === 'vertical' ? [a.y0, a.y1, b.y0, b.y1] : [a.x0, a.x1, b.x0, b.x1];
  const overlap = Math.min(p1, q1) - Math.max(p0, q0);
  return overlap > 0.3 * Math.min(p1 - p0, q1 - q0);
}

export function groupBlocks(
  lines: TextLine[],
  bubbles: Bubble[],
  width: number,
  prefer: Direction,
): TextBlock[] {
  const centre = (b: Box) => Math.floor((b.y0 + b.y1) / 2) * width + Math.floor((b.x0 + b.x1) / 2);
  const inBubble = new Map<Bubble, TextLine[]>();
  const outside: TextLine[] = [];
  for (const line of lines) {
    const bubble = bubbles.find((b) => b.area[centre(line.box)]);
    if (bubble) inBubble.set(bubble, [...(inBubble.get(bubble) ?? []), line]);
    else outside.push(line);
  }
  const blocks: TextBlock[] = [];
  const make = (group: TextLine[], bubble: Bubble | null, direction: Direction): TextBlock => ({
    box: union(group.map((l) => l.box)),
    lines: group.map((l) => l.box),
    direction,
    bubble,
    score: group.reduce((s, l) => s + l.score, 0) / group.length,
  });
  for (const [bubble, group] of inBubble)
    blocks.push(make(group, bubble, directionOf(group, prefer)));
  // Outside bubbles: oriented lines first (they set the block's direction), glyphs after.
  const ordered = [...outside].sort((a, b) => Number(square(a.box)) - Number(square(b.box)));
  const groups: { lines: TextLine[]; direction: Direction }[] = [];
  for (const line of ordered) {
    const own: Direction = square(line.box) ? prefer : line.vertical ? 'vertical' : 'horizontal';
    const joined = groups.find(
      (g) =>
        (square(line.box) || g.direction === own) &&
        g.lines.some((l) => near(l.box, line.box, g.direction)),
    );
    if (joined) joined.lines.push(line);
    else groups.push({ lines: [line], direction: own });
  }
  // Blocks that grew next to each other merge (a line joined one of two neighbours first).
  for (let merged = true; merged;) {
    merged = false;
    for (let i = 0; i < groups.length && !merged; i++)
      for (let j = i + 1; j < groups.length && !merged; j++) {
        const [a, b] = [groups[i]!, groups[j]!];
        if (
          a.direction === b.direction &&
          a.lines.some((l) => b.lines.some((m) => near(l.box, m.box, a.direction)))
        ) {
          a.lines.push(...b.lines);
          groups.splice(j, 1);
          merged = true;
        }
      }
  }
  for (const g of groups) blocks.push(make(g.lines, null, g.direction));
  return blocks;
}
