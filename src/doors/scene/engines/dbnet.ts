/**
 * `dbnet`: a learned text-line detector (text-lines.ts, PaddleOCR's DB
 * model on onnxruntime-node) with learned or tesseract recognition (issue 32 items
 * 1–3). Speech bubbles come from the image as in the `tesseract` engine
 * (bubbles.ts); lines are grouped into blocks (text-blocks.ts: one block per
 * bubble, else by orientation, alignment and spacing) before they are read:
 * horizontal English and Chinese line by line with PaddleOCR's learned
 * recognizer (text-reader.ts), the rest each block alone with tesseract in
 * its direction, everything outside its lines blanked.
 *
 * Only blocks with evidence become text nodes and enter the `segment` mask
 * the fill erases: OCR confidence over a threshold, an ink ratio of
 * lettering inside the line boxes, at most a few lines, not a lone glyph
 * outside every bubble, and not a sound effect (large lettering outside
 * bubbles that OCR cannot read). Everything else is said in the job
 * (`skipped`, with the reason and where it was). The `tesseract` engine
 * stays as the fallback detector.
 */
import { randomUUID } from 'node:crypto';
import type { Op } from '../ops.js';
import { blobBytes, canvasOf, imageNode } from '../images.js';
import { bubbleAround, findBubbles } from './bubbles.js';
import { ringColour } from './fill.js';
import { modelFor, ocrWorkers, PSM, VERTICAL_FIRST, type SourceLanguage } from './ocr-models.js';
import { fixPunctuation } from './punctuation.js';
import { dilate, floodFill, luma, maskPng, type Box, type Mask } from './pixels.js';
import { putMaskOps } from './raster.js';
import type { Engine, SkipReason } from './registry.js';
import { crop, cleanText, grow, read, regionNode } from './tesseract.js';
import { groupBlocks, thicknessOf, union, type TextBlock } from './text-blocks.js';
import { detectLines } from './text-lines.js';
import { readLine } from './text-reader.js';
import { correctEnglish } from './lexicon.js';
import { columnOrder, readingOrder } from './text-layout.js';

/** Mean tesseract confidence (0–100) a block needs, inside a bubble and outside. */
export const MIN_CONFIDENCE = { bubble: 40, outside: 60 } as const;
/** Share of the line boxes' pixels that lettering covers. */
export const INK_RATIO = { min: 0.03, max: 0.6 } as const;
/** More lines than this is not one block of lettering. */
export const MAX_LINES = 10;
/** Luma difference from the colour around a line that marks a pixel as ink. */
const STANDS_OUT = 30;
/**
 * Fewer connected ink pixels than this are a speck of the paper or the
 * scan, not a stroke: a period or an i's dot is larger at any size the
 * detector reads, and the segment mask's dilation covers the anti-aliased
 * crumbs beside a letter. Erasing a speck changes artwork for nothing.
 */
export const MIN_INK_COMPONENT_PX = 3;
const CROP_MARGIN_PX = 8;
/**
 * Languages whose horizontal lines the learned recognizer reads
 * (text-reader.ts: Latin and Chinese); the rest, and vertical columns, are
 * read by tesseract.
 */
export const LEARNED_READING: ReadonlySet<SourceLanguage> = new Set(['en', 'zh', 'zh-Hant']);

export interface FoundBlock extends TextBlock {
  text: string;
  confidence: number;
  ink: Mask;
  inkRatio: number;
}

export interface Skipped {
  reason: SkipReason;
  box: Box;
  text: string;
}

/**
 * Ink of a block: pixels of its line boxes that stand out from the colour
 * around each line, without the strokes that cross a line box's edge — a
 * label's leader line, a balloon's edge, the art behind a caption — since
 * the detector's box leaves a margin around the letters themselves (a
 * descender that reaches the edge is left too: artwork is never erased).
 */
export function inkOf(rgba: Uint8ClampedArray, gray: Uint8Array, width: number, block: TextBlock) {
  const ink = new Uint8Array(gray.length);
  const height = gray.length / width;
  let inked = 0;
  let area = 0;
  for (const line of block.lines) {
    const [r, g, b] = ringColour(rgba, width, height, line);
    const around = 0.299 * r + 0.587 * g + 0.114 * b;
    const w = line.x1 - line.x0;
    const h = line.y1 - line.y0;
    if (w <= 0 || h <= 0) continue;
    const local = new Uint8Array(w * h);
    for (let y = line.y0; y < line.y1; y++)
      for (let x = line.x0; x < line.x1; x++) {
        const i = y * width + x;
        if (block.bubble && !block.bubble.area[i]) continue;
        area++;
        if (Math.abs(gray[i]! - around) > STANDS_OUT) local[(y - line.y0) * w + x - line.x0] = 1;
      }
    const seen = new Uint8Array(w * h);
    for (let seed = 0; seed < local.length; seed++) {
      if (!local[seed] || seen[seed]) continue;
      const part = floodFill(w, h, seed, (k) => !!local[k], seen);
      const crosses = part.some((k) => {
        const x = k % w;
        const y = (k - x) / w;
        return x === 0 || y === 0 || x === w - 1 || y === h - 1;
      });
      if (crosses || part.length < MIN_INK_COMPONENT_PX) continue;
      for (const k of part) {
        const i = (line.y0 + Math.floor(k / w)) * width + line.x0 + (k % w);
        if (!ink[i]) {
          ink[i] = 1;
          inked++;
        }
      }
    }
  }
  return { ink, inkRatio: area ? inked / area : 0 };
}

/** Why a read block is no evidence of lettering, or null when it is. */
export function judge(
  block: Pick<FoundBlock, 'text' | 'confidence' | 'inkRatio' | 'lines' | 'bubble' | 'direction'>,
  medianThickness: number,
): SkipReason | null {
  const glyphs = [...block.text.replace(/[\s\p{P}\p{S}]/gu, '')].length;
  if (!glyphs) return 'notTextLike';
  if (block.lines.length > MAX_LINES) return 'tooLarge';
  if (block.inkRatio < INK_RATIO.min || block.inkRatio > INK_RATIO.max) return 'notTextLike';
  const thick = Math.max(...block.lines.map((l) => thicknessOf(l, block.direction)));
  if (!block.bubble) {
    if (block.confidence < MIN_CONFIDENCE.outside)
      return thick > 2.5 * medianThickness ? 'soundEffect' : 'lowConfidence';
    if (glyphs < 2) return 'loneGlyph';
  } else if (block.confidence < MIN_CONFIDENCE.bubble) return 'lowConfidence';
  return null;
}

/** Detection and recognition of one page's pixels: the blocks kept, and those left alone. */
export async function detectBlocks(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  lang: SourceLanguage,
  workers: ReturnType<typeof ocrWorkers>,
): Promise<{ found: FoundBlock[]; skipped: Skipped[] }> {
  const gray = luma(rgba, width * height);
  const prefer = VERTICAL_FIRST.has(lang) ? 'vertical' : 'horizontal';
  const lines = await detectLines(rgba, width, height, { maxSide: 1024 });
  const bubbles = findBubbles(gray, width, height);
  // Bubbles without a dark outline, found from the lines they hold.
  const seen = new Uint8Array(width * height);
  for (const b of bubbles) for (let i = 0; i < seen.length; i++) seen[i] ||= b.area[i]!;
  for (const line of lines) {
    const c = Math.floor((line.box.y0 + line.box.y1) / 2) * width;
    if (bubbles.some((b) => b.area[c + Math.floor((line.box.x0 + line.box.x1) / 2)])) continue;
    const around = bubbleAround(gray, width, height, line.box, seen);
    if (around) bubbles.push(around);
  }
  const blocks = groupBlocks(lines, bubbles, width, prefer);
  const thicknesses = lines
    .map((l) => thicknessOf(l.box, l.vertical ? 'vertical' : 'horizontal'))
    .sort((a, b) => a - b);
  const median = thicknesses[thicknesses.length >> 1] ?? 0;
  const found: FoundBlock[] = [];
  const skipped: Skipped[] = [];
  for (const detected of blocks) {
    const direction = lang === 'en' ? 'horizontal' : detected.direction;
    let block = detected;
    let read_: { text: string; confidence: number }[];
    if (direction === 'horizontal' && LEARNED_READING.has(lang)) {
      // Line by line, top to bottom, with the learned recognizer (confidence as tesseract's,
      // 0–100), in rows top to bottom and left to right within a row; a line read as no letter
      // or digit, or as one glyph beside other lines (a drawn circle, a stroke), leaves the block.
      read_ = [];
      const kept: Box[] = [];
      const rows = readingOrder(
        block.lines.map((box) => ({ box })),
        false,
      ).map((l) => l.box);
      for (const line of rows) {
        const { text: t, confidence: c } = await readLine(rgba, width, line);
        if (!/[\p{L}\p{N}]/u.test(t)) continue;
        // One glyph beside longer lines is a drawn mark (a bubble of air, a dot) read as a letter.
        if ([...t].length < 2 && block.lines.length > 1) continue;
        read_.push({ text: t, confidence: c * 100 });
        kept.push(line);
      }
      if (kept.length && kept.length < block.lines.length)
        block = { ...block, lines: kept, box: union(kept) };
    } else {
      const keep = new Uint8Array(width * height);
      for (const line of block.lines) {
        const g = grow(line, 2, width, height);
        for (let y = g.y0; y < g.y1; y++)
          for (let x = g.x0; x < g.x1; x++)
            if (!block.bubble || block.bubble.area[y * width + x]) keep[y * width + x] = 1;
      }
      const box = grow(block.box, CROP_MARGIN_PX, width, height);
      const worker = await workers.get(modelFor(lang, direction));
      const readLines = (
        await read(
          worker,
          crop(gray, width, box, keep),
          direction === 'vertical' ? PSM.verticalBlock : PSM.block,
        )
      ).filter((l) => l.text.trim());
      read_ = columnOrder(readLines, direction);
    }
    const { ink, inkRatio } = inkOf(rgba, gray, width, { ...block, direction });
    const cleaned = fixPunctuation(
      cleanText(
        read_.map((l) => l.text),
        lang,
      ),
      lang,
    );
    const text = lang === 'en' ? correctEnglish(cleaned) : cleaned;
    const confidence = read_.length
      ? read_.reduce((s, l) => s + l.confidence, 0) / read_.length
      : 0;
    const candidate: FoundBlock = { ...block, direction, text, confidence, ink, inkRatio };
    const reason = judge(candidate, median);
    if (reason) skipped.push({ reason, box: block.box, text });
    else found.push(candidate);
  }
  return { found: readingOrder(found, VERTICAL_FIRST.has(lang)), skipped };
}

const describeSkip = ({ reason, box, text }: Skipped) =>
  `Left a ${
    {
      nothingToDo: 'region',
      lowConfidence: 'block read with low confidence',
      notTextLike: 'block that does not look like lettering',
      tooLarge: 'block larger than a few lines',
      loneGlyph: 'lone glyph outside any bubble',
      soundEffect: 'sound effect',
      untranslated: 'block',
      merged: 'block',
    }[reason]
  } alone at (${box.x0}, ${box.y0})–(${box.x1}, ${box.y1})${text ? ` (read ${JSON.stringify(text.slice(0, 40))})` : ''}: no text node, not erased.`;

export function createDbnetEngine(): Engine {
  return {
    id: 'dbnet',
    name: 'Learned text detection (PaddleOCR DB on onnxruntime, CPU) with bubbles, blocks and tesseract recognition; en, ja horizontal and vertical, zh, zh-Hant, ko',
    needs: ['SourceImage'],
    produces: ['TextBoxes', 'OcrText'],
    languages: ['en', 'ja', 'zh', 'zh-Hant', 'ko'],
    async start(options) {
      const lang = options.sourceLanguage ?? 'en';
      const workers = ocrWorkers();
      return {
        async page({ page, blobs, skipped: say }) {
          const source = imageNode(page, 'source');
          if (!source) throw new Error(`page '${page.name}' has no source image`);
          const canvas = await canvasOf(await blobBytes(blobs, source.image.blob));
          const { width, height } = canvas;
          const rgba = canvas.getContext('2d').getImageData(0, 0, width, height).data;
          const { found, skipped } = await detectBlocks(rgba, width, height, lang, workers);
          for (const s of skipped) say?.(s.reason, describeSkip(s));
          if (!found.length)
            say?.(
              'nothingToDo',
              'No text found on this page; the later steps have nothing to do on it.',
            );
          const ops: Op[] = page.nodes
            .filter((n) => 'text' in n.kind)
            .map((n) => ({ removeNode: { page: page.id, id: n.id } }));
          const segment = new Uint8Array(width * height);
          const bubbles = new Uint8Array(width * height);
          for (const block of found) {
            for (let i = 0; i < segment.length; i++) {
              segment[i] ||= block.ink[i]!;
              if (block.bubble) bubbles[i] ||= block.bubble.area[i]!;
            }
            const node = regionNode(block, page, width, height, lang);
            ops.push({ addNode: { page: page.id, node: { ...node, id: randomUUID() } } });
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
