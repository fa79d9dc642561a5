/**
 * `tesseract`: finds text regions and reads them, offline on CPU
 * (tesseract.js 7 with the npm data packages, ocr-models.ts).
 *
 * 1. Speech bubbles are segmented from the page's structure (bubbles.ts);
 *    each is read on its own, everything outside the bubble blanked, in its
 *    direction (horizontal or vertical, from the ink's layout) with the
 *    source language's model (unless the page pass below read it well).
 * 2. The whole page is read once in the language's main direction; a
 *    bubble whose lines that pass read confidently keeps them (no second
 *    read), and confident lines outside every bubble (captions on the
 *    artwork) are grouped into regions.
 * Each region becomes a text node (box = its ink plus a small margin, with
 * direction and line polygons); nodes are in reading order (right to left
 * for Japanese and Chinese). The page's `segment` mask (text pixels) and
 * `bubble` mask (bubble areas) are written for the fill and the renderer.
 * A page's previous text nodes are replaced, in one batch.
 */
import { randomUUID } from 'node:crypto';
import { createCanvas } from '@napi-rs/canvas';
import type { Worker } from 'tesseract.js';
import type { Node, Page } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { blobBytes, canvasOf, imageNode } from '../files/images.js';
import { findBubbles } from './bubbles.js';
import {
  modelFor,
  ocrWorkers,
  PSM,
  VERTICAL_FIRST,
  type Direction,
  type SourceLanguage,
} from './ocr-models.js';
import { dilate, luma, maskPng, type Box, type Mask } from './pixels.js';
import { putMaskOps } from './raster.js';
import type { Engine } from './registry.js';
import { columnOrder, inkDirection, readingOrder } from './text-layout.js';

/** Margin around a detected region, so anti-aliased edges stay inside it. */
export const REGION_MARGIN_PX = 4;
const MIN_BUBBLE_CONFIDENCE = 35;
const MIN_CAPTION_CONFIDENCE = 55;
const CROP_MARGIN_PX = 10;
/** Mean confidence at which the page pass's reading of a bubble is kept. */
const PAGE_PASS_TRUSTED = 88;
/** Ink darker than this inside a caption's lines is text. */
const CAPTION_INK = 110;

export interface Region {
  box: Box;
  text: string;
  confidence: number;
  direction: Direction;
  lines: Box[];
  ink: Mask;
  bubble: Mask | null;
}

type Line = { text: string; confidence: number; bbox: Box; words?: Line[] };

const cjk = (lang: SourceLanguage) => lang !== 'en';

/** OCR text as stored: CJK without the spaces tesseract puts between glyphs. */
export function cleanText(lines: string[], lang: SourceLanguage): string {
  const kept = lines.map((l) => l.trim()).filter(Boolean);
  if (cjk(lang)) return kept.map((l) => l.replace(/\s+/g, '')).join(cjk(lang) ? '' : '\n');
  const text = kept.map((l) => l.replace(/\s+/g, ' ')).join('\n');
  return allCaps(text) ? capsFixes(text) : text;
}

/** Mostly capital letters (comic lettering). */
function allCaps(text: string): boolean {
  const letters = text.replace(/[^\p{L}]/gu, '');
  return letters.length >= 3 && letters.replace(/\P{Lu}/gu, '').length >= 0.7 * letters.length;
}

/** Comic lettering is set in capitals: a lone `1` is an I, `0` inside a word an O. */
function capsFixes(text: string): string {
  return text
    .toUpperCase()
    .replace(/(^|\s)1(?=\s|$)/g, '$1I')
    .replace(/(?<=\p{L})0|0(?=\p{L})/gu, 'O');
}

function linesOf(data: { blocks?: { paragraphs: { lines: Line[] }[] }[] | null }): Line[] {
  return (data.blocks ?? []).flatMap((b) => b.paragraphs.flatMap((p) => p.lines));
}

export async function read(worker: Worker, image: Buffer, psm: string) {
  await worker.setParameters({ tessedit_pageseg_mode: psm as never });
  const { data } = await worker.recognize(image, {}, { blocks: true, text: false });
  return linesOf(data);
}

/** A grey crop of the page (pixels where `keep` is unset become white), as PNG. */
export function crop(gray: Uint8Array, width: number, box: Box, keep: Mask | null): Buffer {
  const w = box.x1 - box.x0;
  const h = box.y1 - box.y0;
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(w, h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y + box.y0) * width + x + box.x0;
      const v = !keep || keep[i] ? gray[i]! : 255;
      const o = (y * w + x) * 4;
      image.data[o] = image.data[o + 1] = image.data[o + 2] = v;
      image.data[o + 3] = 255;
    }
  ctx.putImageData(image, 0, 0);
  return canvas.toBuffer('image/png');
}

export const grow = (b: Box, m: number, width: number, height: number): Box => ({
  x0: Math.max(0, b.x0 - m),
  y0: Math.max(0, b.y0 - m),
  x1: Math.min(width, b.x1 + m),
  y1: Math.min(height, b.y1 + m),
});

const union = (boxes: Box[]): Box =>
  boxes.reduce((a, b) => ({
    x0: Math.min(a.x0, b.x0),
    y0: Math.min(a.y0, b.y0),
    x1: Math.max(a.x1, b.x1),
    y1: Math.max(a.y1, b.y1),
  }));

/** Detection and recognition of one page's pixels (page-independent, for tests and the bench). */
export async function detectText(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  lang: SourceLanguage,
  workers: { get(model: string): Promise<Worker> },
): Promise<Region[]> {
  const gray = luma(rgba, width * height);
  const prefer: Direction = VERTICAL_FIRST.has(lang) ? 'vertical' : 'horizontal';
  const whole = { x0: 0, y0: 0, x1: width, y1: height };
  // One pass over the whole page (captions, and bubbles read well enough already).
  const pageWorker = await workers.get(modelFor(lang, prefer));
  const pageLines = (await read(pageWorker, crop(gray, width, whole, null), PSM.auto)).filter(
    (l) => l.text.trim() && /[\p{L}\p{N}]/u.test(l.text),
  );
  const centreIn = (mask: Mask, b: Box) =>
    !!mask[Math.floor((b.y0 + b.y1) / 2) * width + Math.floor((b.x0 + b.x1) / 2)];
  const found: Region[] = [];
  const claimed = new Set<Line>();
  for (const bubble of findBubbles(gray, width, height)) {
    const direction = cjk(lang)
      ? inkDirection(bubble.ink, width, bubble.inkBox, prefer)
      : 'horizontal';
    const inside = pageLines.filter((l) => centreIn(bubble.area, l.bbox));
    for (const l of inside) claimed.add(l);
    let lines: Line[];
    let origin = { x0: 0, y0: 0 };
    const insideConfidence = inside.length
      ? inside.reduce((s, l) => s + l.confidence, 0) / inside.length
      : 0;
    if (
      direction === prefer &&
      insideConfidence >= PAGE_PASS_TRUSTED &&
      covers(inside, bubble.inkBox)
    ) {
      lines = inside;
    } else {
      const box = grow(bubble.inkBox, CROP_MARGIN_PX, width, height);
      const worker = await workers.get(modelFor(lang, direction));
      lines = columnOrder(
        (
          await read(
            worker,
            crop(gray, width, box, bubble.area),
            direction === 'vertical' ? PSM.verticalBlock : PSM.block,
          )
        ).filter((l) => l.text.trim()),
        direction,
      );
      origin = box;
    }
    const text = cleanText(
      lines.map((l) => l.text),
      lang,
    );
    const confidence = lines.length
      ? lines.reduce((s, l) => s + l.confidence, 0) / lines.length
      : 0;
    if (!text || confidence < MIN_BUBBLE_CONFIDENCE) continue;
    found.push({
      box: bubble.inkBox,
      text,
      confidence,
      direction,
      lines: lines.map((l) => ({
        x0: l.bbox.x0 + origin.x0,
        y0: l.bbox.y0 + origin.y0,
        x1: l.bbox.x1 + origin.x0,
        y1: l.bbox.y1 + origin.y0,
      })),
      ink: bubble.ink,
      bubble: bubble.area,
    });
  }
  // Text outside the bubbles: confident words of the page pass outside every
  // bubble (a page line may run across a bubble and a caption beside it),
  // joined again into lines, then into regions.
  const inBubble = new Uint8Array(width * height);
  for (const r of found)
    if (r.bubble) for (let i = 0; i < inBubble.length; i++) inBubble[i] ||= r.bubble[i]!;
  const nearBubble = dilate(inBubble, width, height, 4);
  const captionWords = pageLines
    .flatMap((l) => (l.words?.length ? l.words : [l]))
    .filter(
      (w) =>
        w.text.trim() &&
        /[\p{L}\p{N}]/u.test(w.text) &&
        w.confidence >= MIN_CAPTION_CONFIDENCE &&
        Math.min(w.bbox.x1 - w.bbox.x0, w.bbox.y1 - w.bbox.y0) >= 6 &&
        !centreIn(nearBubble, w.bbox),
    );
  const captionLines = joinWords(captionWords, prefer, cjk(lang) ? '' : ' ');
  for (const group of groupLines(captionLines, prefer)) {
    const box = union(group.map((l) => l.bbox));
    const ink = new Uint8Array(width * height);
    for (const l of group) {
      const b = grow(l.bbox, 2, width, height);
      for (let y = b.y0; y < b.y1; y++)
        for (let x = b.x0; x < b.x1; x++)
          if (gray[y * width + x]! < CAPTION_INK) ink[y * width + x] = 1;
    }
    found.push({
      box,
      text: cleanText(
        group.map((l) => l.text),
        lang,
      ),
      confidence: group.reduce((s, l) => s + l.confidence, 0) / group.length,
      direction: prefer,
      lines: group.map((l) => l.bbox),
      ink,
      bubble: null,
    });
  }
  return readingOrder(found, VERTICAL_FIRST.has(lang));
}

/**
 * Words into lines: a word joins a line it overlaps by half across the
 * reading direction and follows within 1.5 word thicknesses along it.
 */
export function joinWords(words: Line[], direction: Direction, separator: string): Line[] {
  const vertical = direction === 'vertical';
  const along = (b: Box) => (vertical ? [b.y0, b.y1] : [b.x0, b.x1]) as [number, number];
  const across = (b: Box) => (vertical ? [b.x0, b.x1] : [b.y0, b.y1]) as [number, number];
  const sorted = [...words].sort((a, b) => along(a.bbox)[0] - along(b.bbox)[0]);
  const lines: { words: Line[]; box: Box }[] = [];
  for (const w of sorted) {
    const [a0, a1] = across(w.bbox);
    const thickness = a1 - a0;
    const line = lines.find((l) => {
      const [b0, b1] = across(l.box);
      const overlap = Math.min(a1, b1) - Math.max(a0, b0);
      const gap = along(w.bbox)[0] - along(l.box)[1];
      return overlap >= 0.5 * Math.min(thickness, b1 - b0) && gap < 1.5 * thickness;
    });
    if (line) {
      line.words.push(w);
      line.box = union([line.box, w.bbox]);
    } else lines.push({ words: [w], box: w.bbox });
  }
  return lines.map((l) => ({
    text: l.words.map((w) => w.text.trim()).join(separator),
    confidence: l.words.reduce((sum, w) => sum + w.confidence, 0) / l.words.length,
    bbox: l.box,
  }));
}

/** Whether lines cover most of a box (the page pass read the whole bubble). */
function covers(lines: Line[], box: Box): boolean {
  if (!lines.length) return false;
  const u = union(lines.map((l) => l.bbox));
  const w = Math.min(u.x1, box.x1) - Math.max(u.x0, box.x0);
  const h = Math.min(u.y1, box.y1) - Math.max(u.y0, box.y0);
  if (w <= 0 || h <= 0) return false;
  return (w * h) / ((box.x1 - box.x0) * (box.y1 - box.y0)) >= 0.8;
}

/**
 * Lines into regions: a line joins a region when it lies within one line
 * thickness of it across the reading direction and overlaps it along it.
 */
export function groupLines<L extends { bbox: Box }>(lines: L[], direction: Direction): L[][] {
  const vertical = direction === 'vertical';
  const sorted = [...lines].sort((a, b) =>
    vertical ? b.bbox.x1 - a.bbox.x1 : a.bbox.y0 - b.bbox.y0 || a.bbox.x0 - b.bbox.x0,
  );
  const out: { lines: L[]; box: Box }[] = [];
  for (const line of sorted) {
    const b = line.bbox;
    const near = out.find((r) =>
      vertical
        ? r.box.x0 - b.x1 < b.x1 - b.x0 && b.y0 < r.box.y1 && b.y1 > r.box.y0
        : b.y0 - r.box.y1 < b.y1 - b.y0 && b.x0 < r.box.x1 && b.x1 > r.box.x0 && b.y0 >= r.box.y0,
    );
    if (near) {
      near.lines.push(line);
      near.box = union([near.box, b]);
    } else out.push({ lines: [line], box: b });
  }
  return out.map((r) => r.lines);
}

/** The previous name of `groupLines(lines, 'horizontal')`. */
export const regions = <L extends { bbox: Box }>(lines: L[]) => groupLines(lines, 'horizontal');

/** The text node of a region found in an image of `width`×`height` (node coordinates are page space). */
export function regionNode(
  region: Pick<Region, 'box' | 'text' | 'confidence' | 'direction' | 'lines'>,
  page: Pick<Page, 'width' | 'height'>,
  width: number,
  height: number,
  lang: SourceLanguage,
): Node {
  const sx = page.width / width;
  const sy = page.height / height;
  const b = grow(region.box, REGION_MARGIN_PX, width, height);
  const thickness = region.lines
    .map((l) => (region.direction === 'vertical' ? l.x1 - l.x0 : l.y1 - l.y0))
    .sort((a, c) => a - c);
  return {
    id: randomUUID(),
    transform: {
      x: b.x0 * sx,
      y: b.y0 * sy,
      width: (b.x1 - b.x0) * sx,
      height: (b.y1 - b.y0) * sy,
      rotationDeg: 0,
    },
    visible: true,
    kind: {
      text: {
        text: region.text,
        confidence: Math.round(region.confidence) / 100,
        sourceLang: lang,
        direction: region.direction,
        linePolygons: region.lines.map((l) => [
          [l.x0 * sx, l.y0 * sy],
          [l.x1 * sx, l.y0 * sy],
          [l.x1 * sx, l.y1 * sy],
          [l.x0 * sx, l.y1 * sy],
        ]),
        fontSizePx: Math.max(1, thickness[thickness.length >> 1] ?? 1),
      },
    },
  };
}

export function createTesseractEngine(): Engine {
  return {
    id: 'tesseract',
    name: 'Tesseract OCR (bubble segmentation, text detection and recognition; en, ja horizontal and vertical, zh, ko)',
    needs: ['SourceImage'],
    produces: ['TextBoxes', 'OcrText'],
    languages: ['en', 'ja', 'zh', 'zh-Hant', 'ko'],
    async start(options) {
      const lang = options.sourceLanguage ?? 'en';
      const workers = ocrWorkers();
      return {
        async page({ page, blobs, skipped }) {
          const source = imageNode(page, 'source');
          if (!source) throw new Error(`page '${page.name}' has no source image`);
          const canvas = await canvasOf(await blobBytes(blobs, source.image.blob));
          const { width, height } = canvas;
          const rgba = canvas.getContext('2d').getImageData(0, 0, width, height).data;
          const found = await detectText(rgba, width, height, lang, workers);
          if (!found.length)
            skipped?.(
              'nothingToDo',
              'No text found on this page; the later steps have nothing to do on it.',
            );
          const ops: Op[] = page.nodes
            .filter((n) => 'text' in n.kind)
            .map((n) => ({ removeNode: { page: page.id, id: n.id } }));
          const segment = new Uint8Array(width * height);
          const bubbles = new Uint8Array(width * height);
          for (const region of found) {
            for (let i = 0; i < segment.length; i++) {
              segment[i] ||= region.ink[i]!;
              if (region.bubble) bubbles[i] ||= region.bubble[i]!;
            }
            const node = regionNode(region, page, width, height, lang);
            ops.push({ addNode: { page: page.id, node } });
          }
          const text = dilate(segment, width, height, 2);
          ops.push(
            ...putMaskOps(page, 'segment', await blobs.put(await maskPng(text, width, height))),
          );
          ops.push(
            ...putMaskOps(page, 'bubble', await blobs.put(await maskPng(bubbles, width, height))),
          );
          return ops;
        },
        close: () => workers.close(),
      };
    },
  };
}
