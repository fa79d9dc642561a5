/**
 * A PDF page's text layer as pdf.js reads it (spec/notes.md "PDF geometry
 * and digests"): words with their boxes in display coordinates (after the
 * page's rotation and crop box, origin top-left, as fractions of the page),
 * grouped into lines top to bottom, plus the page geometry and its digests.
 *
 * pdf.js reports runs of text, not glyphs; a run holding several words is
 * split at whitespace and its advance width shared out by character count.
 * Nothing is ever recognised from images: a page without a text layer has no
 * words (→ `noText`).
 */
import { canonicalJson, sha256Hex } from '../../kernel/index.js';
import type * as PdfJs from 'pdfjs-dist/legacy/build/pdf.mjs';

/** Affine matrix [a, b, c, d, e, f] as PDF and pdf.js use it. */
export type Matrix = [number, number, number, number, number, number];
/** An axis-aligned box in display fractions: left, top, right, bottom (0…1). */
export interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface Word {
  text: string;
  box: Box;
}

export interface Line {
  words: Word[];
  box: Box;
  text: string;
}

export interface PageGeometry {
  /** Crop box (intersected with the media box) in PDF user units. */
  cropBox: [number, number, number, number];
  /** Displayed size in PDF units, after rotation. */
  height: number;
  rotation: number;
  width: number;
}

export interface PageText {
  geometry: PageGeometry;
  geometryDigest: string;
  /** All words, as lines top to bottom. */
  lines: Line[];
  pageText: string;
  pageTextDigest: string;
  /** User space → display pixels at scale 1 (pdf.js viewport transform). */
  viewport: Matrix;
}

export class PdfUnreadableError extends Error {}

// pdf.js is large; load it on first use so the CLI starts fast.
let pdfjsModule: Promise<typeof PdfJs> | undefined;
const pdfjs = () => (pdfjsModule ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

/** Opens a PDF with pdf.js (a copy of the bytes: pdf.js detaches what it is given). */
async function open(bytes: Uint8Array) {
  const lib = await pdfjs();
  const task = lib.getDocument({
    data: new Uint8Array(bytes),
    verbosity: 0,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
  });
  try {
    return await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw new PdfUnreadableError(error instanceof Error ? error.message : String(error));
  }
}

/** Page count of a readable, unencrypted PDF; throws PdfUnreadableError otherwise. */
export async function pageCountOf(bytes: Uint8Array): Promise<number> {
  const doc = await open(bytes);
  try {
    return doc.numPages;
  } finally {
    await doc.destroy();
  }
}

const apply = (m: Matrix, x: number, y: number): [number, number] => [
  m[0] * x + m[2] * y + m[4],
  m[1] * x + m[3] * y + m[5],
];

export function invert(m: Matrix): Matrix {
  const det = m[0] * m[3] - m[1] * m[2];
  return [
    m[3] / det,
    -m[1] / det,
    -m[2] / det,
    m[0] / det,
    (m[2] * m[5] - m[3] * m[4]) / det,
    (m[1] * m[4] - m[0] * m[5]) / det,
  ];
}

interface TextRun {
  str: string;
  transform: number[];
  width: number;
  height: number;
  fontName: string;
}

/** Reads one page (0-based) of the PDF. */
export async function readPageText(bytes: Uint8Array, pageIndex: number): Promise<PageText> {
  const doc = await open(bytes);
  try {
    const page = await doc.getPage(pageIndex + 1);
    const viewport = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const styles = content.styles as Record<string, { ascent?: number; descent?: number }>;
    const vt = viewport.transform as Matrix;
    const words: Word[] = [];
    for (const item of content.items) {
      if (!('str' in item)) continue;
      const run = item as TextRun;
      if (run.str.trim() === '') continue;
      const style = styles[run.fontName] ?? {};
      words.push(...wordsOf(run, style.ascent ?? 0.8, style.descent ?? -0.2, vt, viewport));
    }
    // Text outside the crop box is not on the displayed page.
    const shown = words.filter((w) => {
      const cx = (w.box.x0 + w.box.x1) / 2;
      const cy = (w.box.y0 + w.box.y1) / 2;
      return cx >= 0 && cx <= 1 && cy >= 0 && cy <= 1;
    });
    const [vx0, vy0, vx1, vy1] = page.view as [number, number, number, number];
    const geometry: PageGeometry = {
      cropBox: [vx0, vy0, vx1, vy1],
      height: viewport.height,
      rotation: page.rotate,
      width: viewport.width,
    };
    const lines = groupLines(shown);
    const pageText = lines.map((l) => l.text).join('\n');
    return {
      geometry,
      geometryDigest: sha256Hex(canonicalJson(geometry)),
      lines,
      pageText,
      pageTextDigest: sha256Hex(pageText),
      viewport: vt,
    };
  } finally {
    await doc.destroy();
  }
}

function wordsOf(
  run: TextRun,
  ascent: number,
  descent: number,
  vt: Matrix,
  viewport: { width: number; height: number },
): Word[] {
  const [a, b, c, d, e, f] = run.transform as Matrix;
  const advance = Math.hypot(a, b) || 1;
  const size = Math.hypot(c, d) || run.height || 1;
  const dir = [a / advance, b / advance];
  const up = [c / size, d / size];
  const chars = [...run.str];
  const out: Word[] = [];
  const token = /\S+/gu;
  for (let m = token.exec(run.str); m; m = token.exec(run.str)) {
    const start = [...run.str.slice(0, m.index)].length;
    const end = start + [...m[0]].length;
    const s0 = (run.width * start) / chars.length;
    const s1 = (run.width * end) / chars.length;
    const corners = [
      [s0, descent * size],
      [s1, descent * size],
      [s0, ascent * size],
      [s1, ascent * size],
    ].map(([s, t]) => apply(vt, e + dir[0]! * s! + up[0]! * t!, f + dir[1]! * s! + up[1]! * t!));
    const xs = corners.map((p) => p[0] / viewport.width);
    const ys = corners.map((p) => p[1] / viewport.height);
    out.push({
      text: m[0],
      box: { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) },
    });
  }
  return out;
}

const union = (boxes: Box[]): Box => ({
  x0: Math.min(...boxes.map((b) => b.x0)),
  y0: Math.min(...boxes.map((b) => b.y0)),
  x1: Math.max(...boxes.map((b) => b.x1)),
  y1: Math.max(...boxes.map((b) => b.y1)),
});

const lineOf = (words: Word[]): Line => {
  const sorted = [...words].sort((p, q) => p.box.x0 - q.box.x0);
  return {
    words: sorted,
    box: union(sorted.map((w) => w.box)),
    text: sorted.map((w) => w.text).join(' '),
  };
};

/** Words whose vertical centres lie within half a line height of each other form a line. */
export function groupLines(words: Word[]): Line[] {
  const centre = (b: Box) => (b.y0 + b.y1) / 2;
  const sorted = [...words].sort((p, q) => centre(p.box) - centre(q.box) || p.box.x0 - q.box.x0);
  const groups: Word[][] = [];
  for (const word of sorted) {
    const last = groups[groups.length - 1];
    const box = last ? union(last.map((w) => w.box)) : null;
    const h = Math.min(word.box.y1 - word.box.y0, box ? box.y1 - box.y0 : Infinity);
    if (last && box && Math.abs(centre(word.box) - centre(box)) <= h / 2) last.push(word);
    else groups.push([word]);
  }
  return groups.map(lineOf).sort((p, q) => p.box.y0 - q.box.y0);
}

/** A rect in millionths of the displayed page (the wire unit). */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const MILLION = 1_000_000;

export interface Selection {
  lines: Line[];
  selectedText: string;
  selectionTextDigest: string;
}

/** Words whose box centre lies inside `rect`, grouped by the page's lines, top to bottom. */
export function select(page: PageText, rect: Rect): Selection {
  const inside = (w: Word) => {
    const cx = ((w.box.x0 + w.box.x1) / 2) * MILLION;
    const cy = ((w.box.y0 + w.box.y1) / 2) * MILLION;
    return cx >= rect.x && cx <= rect.x + rect.width && cy >= rect.y && cy <= rect.y + rect.height;
  };
  const lines = page.lines
    .map((l) => l.words.filter(inside))
    .filter((ws) => ws.length > 0)
    .map(lineOf);
  const selectedText = lines.map((l) => l.text).join('\n');
  return { lines, selectedText, selectionTextDigest: sha256Hex(selectedText) };
}

/** A display box as a wire rect: integers in millionths, clamped to the page. */
export function rectOf(box: Box): Rect {
  const clamp = (v: number) => Math.min(MILLION, Math.max(0, v));
  const x = Math.floor(clamp(box.x0 * MILLION));
  const y = Math.floor(clamp(box.y0 * MILLION));
  const x1 = Math.ceil(clamp(box.x1 * MILLION));
  const y1 = Math.ceil(clamp(box.y1 * MILLION));
  return {
    x: Math.min(x, MILLION - 1),
    y: Math.min(y, MILLION - 1),
    width: Math.max(1, x1 - x),
    height: Math.max(1, y1 - y),
  };
}

/**
 * A display box as a PDF QuadPoints quad in user space, corners in the
 * reading orientation (upper-left, upper-right, lower-left, lower-right),
 * which is what viewers expect.
 */
export function quadOf(page: PageText, box: Box): number[] {
  const inv = invert(page.viewport);
  const w = page.geometry.width;
  const h = page.geometry.height;
  return [
    [box.x0, box.y0],
    [box.x1, box.y0],
    [box.x0, box.y1],
    [box.x1, box.y1],
  ].flatMap(([x, y]) => apply(inv, x! * w, y! * h));
}

/** A point in display fractions → user space. */
export function userPoint(page: PageText, x: number, y: number): [number, number] {
  return apply(invert(page.viewport), x * page.geometry.width, y * page.geometry.height);
}
