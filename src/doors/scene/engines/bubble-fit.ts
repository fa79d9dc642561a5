/**
 * Fitting text inside an area that is not a rectangle (a speech bubble):
 * lines (horizontal) or columns (vertical, right to left) are laid out
 * centred on the area, each given the span the area allows over its whole
 * band, so no glyph box leaves the area. The largest size that fits wins.
 */
import type { Box, Mask } from './pixels.js';

/** Vertical advance of one glyph, in font sizes. */
export const VERTICAL_ADVANCE = 1.05;

export interface Area {
  mask: Mask;
  width: number;
  box: Box;
  /** Centre the text is laid around. */
  cx: number;
  cy: number;
}

/** A placed line or column: its text and the rectangle it may use. */
export interface Placed {
  text: string;
  rect: Box;
}

export interface Layout {
  size: number;
  lines: Placed[];
}

/** The longest run of set pixels containing `at` along a row (or column), or null. */
function runAt(
  area: Area,
  fixed: number,
  at: number,
  horizontal: boolean,
): [number, number] | null {
  const { mask, width, box } = area;
  const get = (v: number) => (horizontal ? mask[fixed * width + v] : mask[v * width + fixed]);
  const lo = horizontal ? box.x0 : box.y0;
  const hi = horizontal ? box.x1 : box.y1;
  if (at < lo || at >= hi || !get(at)) return null;
  let a = at;
  let b = at;
  while (a - 1 >= lo && get(a - 1)) a--;
  while (b + 1 < hi && get(b + 1)) b++;
  return [a, b + 1];
}

/** The span every row (column) of the band [from, to) allows around the centre. */
function bandSpan(
  area: Area,
  from: number,
  to: number,
  horizontal: boolean,
): [number, number] | null {
  let lo = -Infinity;
  let hi = Infinity;
  const centre = Math.round(horizontal ? area.cx : area.cy);
  for (let v = Math.floor(from); v < Math.ceil(to); v++) {
    const run = runAt(area, v, centre, horizontal);
    if (!run) return null;
    lo = Math.max(lo, run[0]);
    hi = Math.min(hi, run[1]);
  }
  return hi > lo ? [lo, hi] : null;
}

export interface Measure {
  /** Advance of a string at the current size (horizontal) or of one glyph (vertical). */
  width(text: string): number;
}

/**
 * Word-wraps `text` into `n` horizontal lines of `size` px centred on the
 * area; null when it does not fit.
 */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。！？]/u;
const CJK_OR_WORD =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。！？]|[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。！？]+/gu;

/** Line-breaking units: words, and single Japanese/Chinese characters (they break anywhere). */
function tokens(text: string): string[] {
  return text.match(CJK_OR_WORD) ?? [];
}

/** Two units on one line: a space between words, none next to a CJK character. */
function joined(line: string, next: string): string {
  const tight = CJK.test(line.slice(-1)) || CJK.test(next[0] ?? '');
  return tight ? `${line}${next}` : `${line} ${next}`;
}

function horizontalLines(
  area: Area,
  text: string,
  size: number,
  n: number,
  lineHeight: number,
  measure: Measure,
  breakWords: boolean,
): Placed[] | null {
  const total = n * size * lineHeight;
  const top = area.cy - total / 2;
  const spans: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const span = bandSpan(
      area,
      top + i * size * lineHeight,
      top + (i + 1) * size * lineHeight,
      true,
    );
    if (!span) return null;
    spans.push(span);
  }
  const words = tokens(text);
  const lines: Placed[] = [];
  let w = 0;
  for (let i = 0; i < n && w < words.length; i++) {
    const [lo, hi] = spans[i]!;
    let line = words[w]!;
    if (measure.width(line) > hi - lo) {
      if (!breakWords) return null;
      // A word wider than the line breaks by character (only when nothing fits otherwise).
      let cut = [...line].length - 1;
      while (cut > 0 && measure.width([...line].slice(0, cut).join('')) > hi - lo) cut--;
      if (!cut) return null;
      words.splice(w + 1, 0, [...line].slice(cut).join(''));
      line = [...line].slice(0, cut).join('');
    }
    w++;
    while (w < words.length && measure.width(joined(line, words[w]!)) <= hi - lo)
      line = joined(line, words[w++]!);
    const y0 = top + i * size * lineHeight;
    lines.push({ text: line, rect: { x0: lo, y0, x1: hi, y1: y0 + size * lineHeight } });
  }
  return w === words.length ? lines : null;
}

/** Characters into `n` columns (right to left) of `size` px centred on the area. */
function verticalColumns(
  area: Area,
  text: string,
  size: number,
  n: number,
  advance: number,
  measure: Measure,
): Placed[] | null {
  const colWidth = size * 1.15;
  const right = area.cx + (n * colWidth) / 2;
  const chars = [...text.replace(/\s+/g, '')];
  const cols: Placed[] = [];
  let c = 0;
  for (let i = 0; i < n && c < chars.length; i++) {
    const x1 = right - i * colWidth;
    const x0 = x1 - colWidth;
    const span = bandSpan(area, x0, x1, false);
    if (!span) return null;
    const fit = Math.floor((span[1] - span[0]) / (size * advance));
    if (fit < 1) return null;
    // Balanced columns: what is left spread over the columns left.
    const take = chars.slice(c, c + Math.min(fit, Math.ceil((chars.length - c) / (n - i))));
    if (take.some((ch) => measure.width(ch) > colWidth)) return null;
    c += take.length;
    const h = take.length * size * advance;
    const mid = Math.min(Math.max(area.cy, span[0] + h / 2), span[1] - h / 2);
    cols.push({ text: take.join(''), rect: { x0, y0: mid - h / 2, x1, y1: mid + h / 2 } });
  }
  return c === chars.length ? cols : null;
}

/**
 * The largest size between `min` and `max` at which the text fits the
 * area (words whole if possible, else broken by character), with
 * `measureAt(size)` measuring at that size; null if even `min` does not fit.
 */
export function fitInArea(
  area: Area,
  text: string,
  vertical: boolean,
  measureAt: (size: number) => Measure,
  min: number,
  max: number,
  fixed?: number,
): Layout | null {
  return fitWith(false) ?? fitWith(true);
  function fitWith(breakWords: boolean): Layout | null {
    const tryAt = (size: number): Placed[] | null => {
      const measure = measureAt(size);
      const extent = vertical ? area.box.x1 - area.box.x0 : area.box.y1 - area.box.y0;
      const maxN = Math.max(1, Math.floor(extent / (size * (vertical ? 1.15 : 1.2))));
      for (let n = 1; n <= maxN; n++) {
        const placed = vertical
          ? verticalColumns(area, text, size, n, VERTICAL_ADVANCE, measure)
          : horizontalLines(area, text, size, n, 1.2, measure, breakWords);
        if (placed) return placed;
      }
      return null;
    };
    if (fixed) {
      const lines = tryAt(fixed);
      return lines ? { size: fixed, lines } : null;
    }
    // Binary search for the largest fitting size (fitting is nearly monotonic in the size).
    let lo = min;
    let hi = Math.max(min, Math.floor(max));
    let best: Layout | null = null;
    while (lo <= hi) {
      const mid = Math.floor((lo + hi) / 2);
      const lines = tryAt(mid);
      if (lines) {
        best = { size: mid, lines };
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }
}
