/**
 * `renderer`: draws each translation into its text region over the
 * inpainted image (or the source when there is none) and writes the page's
 * rendered image. Text is word-wrapped (long words break by character), the
 * font size is the largest that fits unless the style fixes one, and the
 * style's colour, stroke, bold/italic and alignment apply; the font is the
 * node's first installed family, else `defaultFont`, else the project's, else
 * Comic Neue for Latin text (lettering-fonts.ts), an installed Noto CJK font
 * for CJK text, else DejaVu Sans.
 *
 * Per page (issue 32 item 5): one text per bubble (a second node in the same
 * bubble has its translation drawn with the first's, and is said as
 * `merged`); no size above the page's median fitted size × SIZE_BAND, so
 * neighbouring bubbles match; in vertical columns long marks, dashes and
 * brackets are turned a quarter.
 *
 * When the page has a `bubble` mask (from the tesseract engine), a region
 * lying in a bubble is filled inside the bubble's shape, not only its box
 * (bubble-fit.ts): each line gets the span the bubble allows, and drawing
 * is clipped to those spans, so nothing lands outside the bubble. Japanese
 * and Chinese translations are set vertically, columns right to left.
 */
import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import type { BlobStore } from '../../../kernel/index.js';
import type { Node, Page, TextData } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { blobBytes, decode, defaultFont, fontFamilies, imageNode, png } from '../files/images.js';
import { withoutEvidence } from './fill.js';
import { comicFont, latinOnly } from './lettering-fonts.js';
import type { Engine, PageInput, PipelineOptions } from './registry.js';
import { fitInArea, VERTICAL_ADVANCE, type Area, type Layout } from './bubble-fit.js';
import { erode, floodFill, maskFrom, type Box, type Mask } from './pixels.js';
import { maskNode, pixelRect, putImageOps, textNodes } from './raster.js';

const LINE_HEIGHT = 1.2;
/** No translation on a page is set larger than the page's median size times this. */
export const SIZE_BAND = 1.25;
/** Marks drawn turned a quarter in a vertical column: long vowel, dashes, ellipses, brackets, tildes. */
const ROTATED_IN_COLUMNS = /[ー－―—–\-…‥〜～~()（）「」『』【】〔〕［］｛｝<>〈〉《》=＝]/u;

interface Planned {
  node: Node;
  text: TextData;
  content: string;
  r: ReturnType<typeof pixelRect>;
  area: Area & { inBubble: boolean };
  size: number;
  layout: Layout | null;
  vertical?: boolean;
  family?: string;
}

const boxKey = (b: Box) => `${b.x0},${b.y0},${b.x1},${b.y1}`;
const PADDING_PX = 2;
const MIN_SIZE = 6;

/** Greedy word wrap to `maxWidth`; words wider than a line are split by character. */
export function wrap(ctx: SKRSContext2D, text: string, maxWidth: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split(/\r?\n/)) {
    let line = '';
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      const candidate = line ? `${line} ${word}` : word;
      if (ctx.measureText(candidate).width <= maxWidth) {
        line = candidate;
        continue;
      }
      if (line) lines.push(line);
      let rest = word;
      while (ctx.measureText(rest).width > maxWidth && rest.length > 1) {
        let cut = rest.length - 1;
        while (cut > 1 && ctx.measureText(rest.slice(0, cut)).width > maxWidth) cut--;
        lines.push(rest.slice(0, cut));
        rest = rest.slice(cut);
      }
      line = rest;
    }
    lines.push(line);
  }
  return lines;
}

/** Fonts known to carry Japanese, Chinese and Korean glyphs, in order of preference. */
export const CJK_FONTS = [
  'Noto Sans CJK JP',
  'Noto Serif CJK JP',
  'Noto Sans CJK SC',
  'Noto Sans CJK KR',
];

export function fontFor(text: TextData, options: PipelineOptions, content = ''): string {
  const installed = fontFamilies();
  const named = text.style?.fontFamilies.find((f) => installed.includes(f));
  const chosen =
    named ?? [options.defaultFont, options.projectFont].find((f) => f && installed.includes(f));
  if (chosen) return chosen;
  if (isCjk(content)) return CJK_FONTS.find((f) => installed.includes(f)) ?? defaultFont();
  if (content && latinOnly(content)) return comicFont() ?? defaultFont();
  return defaultFont();
}

const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const VERTICAL_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** Mostly Han, kana or Hangul. */
export function isCjk(content: string): boolean {
  const chars = [...content.replace(/\s+/g, '')];
  return chars.length > 0 && chars.filter((c) => CJK_CHAR.test(c)).length * 2 >= chars.length;
}

/** Set vertically: Japanese and Chinese text (Korean stays horizontal, as printed). */
export function isVerticalScript(content: string): boolean {
  const chars = [...content.replace(/\s+/g, '')];
  return chars.length > 0 && chars.filter((c) => VERTICAL_CHAR.test(c)).length * 2 >= chars.length;
}

/** `erode`, computed only in a window around the set pixels (a bubble is small next to its page). */
function erodeAround(mask: Mask, width: number, height: number, r: number): Mask {
  let x0 = width;
  let y0 = height;
  let x1 = 0;
  let y1 = 0;
  for (let i = 0; i < mask.length; i++)
    if (mask[i]) {
      const x = i % width;
      const y = (i - x) / width;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  const out = new Uint8Array(mask.length);
  if (x1 < x0) return out;
  // One pixel of frame, so the window's edge is outside the area as the page's is.
  const wx0 = x0 - 1;
  const wy0 = y0 - 1;
  const ww = x1 - x0 + 3;
  const wh = y1 - y0 + 3;
  const local = new Uint8Array(ww * wh);
  for (let y = y0; y <= y1; y++)
    for (let x = x0; x <= x1; x++) local[(y - wy0) * ww + x - wx0] = mask[y * width + x]!;
  const eroded = erode(local, ww, wh, r);
  for (let y = y0; y <= y1; y++)
    for (let x = x0; x <= x1; x++) out[y * width + x] = eroded[(y - wy0) * ww + x - wx0]!;
  return out;
}

/**
 * The area text may use: the bubble(s) under the region's box, shrunk by
 * `inset`; else the box itself shrunk by `inset`.
 */
export function regionArea(
  bubbles: Mask | null,
  width: number,
  height: number,
  r: Box,
  inset: number,
): Area & { inBubble: boolean } {
  const mask = new Uint8Array(width * height);
  let found = false;
  if (bubbles) {
    const seen = new Uint8Array(width * height);
    for (let y = r.y0; y < r.y1; y++)
      for (let x = r.x0; x < r.x1; x++) {
        const i = y * width + x;
        if (bubbles[i] && !seen[i]) {
          for (const j of floodFill(width, height, i, (k) => !!bubbles[k], seen)) mask[j] = 1;
          found = true;
        }
      }
  }
  if (!found)
    for (let y = r.y0; y < r.y1; y++) for (let x = r.x0; x < r.x1; x++) mask[y * width + x] = 1;
  const inner = erodeAround(mask, width, height, inset);
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < inner.length; i++)
    if (inner[i]) {
      const x = i % width;
      const y = (i - x) / width;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x + 1);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y + 1);
    }
  const box = x1 > x0 ? { x0, y0, x1, y1 } : { x0: r.x0, y0: r.y0, x1: r.x0, y1: r.y0 };
  // Centre on the text's box when it lies in the area, else on the area.
  const cx = (r.x0 + r.x1) / 2;
  const cy = (r.y0 + r.y1) / 2;
  const inside = inner[Math.round(cy) * width + Math.round(cx)];
  return {
    inBubble: found,
    mask: inner,
    width,
    box,
    cx: found && !inside ? (box.x0 + box.x1) / 2 : found ? (box.x0 + box.x1 + cx * 2) / 4 : cx,
    cy: found && !inside ? (box.y0 + box.y1) / 2 : found ? (box.y0 + box.y1 + cy * 2) / 4 : cy,
  };
}

const cssFont = (size: number, family: string, text: TextData) =>
  `${text.style?.italic ? 'italic ' : ''}${text.style?.bold ? 'bold ' : ''}${size}px "${family}"`;

/** The largest size (px) whose wrapped lines fit the box. */
export function fitSize(
  ctx: SKRSContext2D,
  content: string,
  family: string,
  text: TextData,
  w: number,
  h: number,
): number {
  let lo = MIN_SIZE;
  let hi = Math.max(MIN_SIZE, Math.floor(h));
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    ctx.font = cssFont(mid, family, text);
    const lines = wrap(ctx, content, w);
    const fits =
      lines.length * mid * LINE_HEIGHT <= h && lines.every((l) => ctx.measureText(l).width <= w);
    if (fits) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const rgba = (c: readonly number[]) => `rgba(${c[0]}, ${c[1]}, ${c[2]}, ${(c[3] ?? 255) / 255})`;

type Skipped = PageInput['skipped'];

/**
 * The page's base image (inpainted, else source) on a canvas, and its bubble
 * mask when it has one; no larger than `maxSide` on its long side, `scale`
 * being the canvas's size over the image's.
 */
async function baseOf(page: Page, blobs: BlobStore, maxSide = Infinity) {
  const base = imageNode(page, 'inpainted') ?? imageNode(page, 'source');
  if (!base) throw new Error(`page '${page.name}' has no source image`);
  const bubbleNode = maskNode(page, 'bubble');
  // Reduced renders (an ask's before and after of one page) decode each image once.
  const key = Number.isFinite(maxSide)
    ? `${base.image.blob}:${bubbleNode?.mask.blob ?? ''}:${maxSide}`
    : null;
  const kept = key ? reduced.get(key) : undefined;
  const loaded = kept ?? (await loadBase(blobs, base.image.blob, bubbleNode?.mask.blob, maxSide));
  if (key && !kept) {
    if (reduced.size >= REDUCED_KEPT) reduced.delete(reduced.keys().next().value!);
    reduced.set(key, loaded);
  }
  const { width, height } = loaded;
  // A copy to draw on: the kept one stays clean.
  const canvas = key ? createCanvas(width, height) : loaded.canvas;
  const ctx = canvas.getContext('2d');
  if (key) ctx.drawImage(loaded.canvas, 0, 0);
  return { canvas, ctx, width, height, bubbles: loaded.bubbles, scale: loaded.scale };
}

type Loaded = {
  canvas: Canvas;
  width: number;
  height: number;
  bubbles: Mask | null;
  scale: number;
};
/** Reduced bases lately loaded, by image, mask and size (a few hundred KiB each). */
const reduced = new Map<string, Loaded>();
const REDUCED_KEPT = 8;

async function loadBase(
  blobs: BlobStore,
  imageBlob: string,
  maskBlob: string | undefined,
  maxSide: number,
): Promise<Loaded> {
  const image = await decode(await blobBytes(blobs, imageBlob));
  const scale = Math.min(1, maxSide / Math.max(image.width, image.height, 1));
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const canvas = createCanvas(width, height);
  canvas.getContext('2d').drawImage(image, 0, 0, width, height);
  let bubbles: Mask | null = null;
  if (maskBlob) {
    const m = await decode(await blobBytes(blobs, maskBlob));
    if (m.width === image.width && m.height === image.height) {
      const scaled = createCanvas(width, height);
      const g = scaled.getContext('2d');
      g.drawImage(m, 0, 0, width, height);
      bubbles = maskFrom(g.getImageData(0, 0, width, height).data, width * height);
    }
  }
  return { canvas, width, height, bubbles, scale };
}

/**
 * 1. Where each translation goes, in canvas pixels; a second text in one
 * bubble joins the first (one text per bubble). Lettering the fill leaves
 * in place (no evidence to erase it) is not drawn over.
 */
function plan(
  page: Page,
  nodes: ReturnType<typeof textNodes>,
  {
    width,
    height,
    bubbles,
    scale,
  }: { width: number; height: number; bubbles: Mask | null; scale: number },
  skipped: Skipped,
): Planned[] {
  const sx = width / page.width;
  const sy = height / page.height;
  const planned: Planned[] = [];
  const byBubble = new Map<string, Planned>();
  for (const { node, text } of nodes) {
    const content = text.translation?.trim();
    if (!content || !node.visible) continue;
    const unfit = withoutEvidence(text, true);
    if (unfit) {
      skipped?.(
        unfit,
        `Text node ${node.id} not drawn: the fill leaves its lettering (${unfit}).`,
        {
          textNodeId: node.id,
        },
      );
      continue;
    }
    const t = node.transform;
    const r = pixelRect(
      { ...t, x: t.x * sx, y: t.y * sy, width: t.width * sx, height: t.height * sy },
      width,
      height,
    );
    const padding = Math.max(1, Math.round(PADDING_PX * scale));
    if (r.w <= 2 * padding || r.h <= 2 * padding) continue;
    const inset = padding + Math.ceil((text.style?.stroke?.widthPx ?? 0) * scale);
    const area = regionArea(bubbles, width, height, r, inset);
    const key = area.inBubble ? boxKey(area.box) : null;
    const first = key ? byBubble.get(key) : undefined;
    if (first) {
      first.content += (isCjk(first.content) ? '' : ' ') + content;
      skipped?.(
        'merged',
        `Text node ${node.id} shares a bubble with text node ${first.node.id}; its translation is drawn with that one's.`,
        { textNodeId: node.id },
      );
      continue;
    }
    const entry: Planned = { node, text, content, r, area, size: 0, layout: null };
    planned.push(entry);
    if (key) byBubble.set(key, entry);
  }
  return planned;
}

/**
 * 2. Each fitted at its largest size; then no size above the page's band
 * (median × SIZE_BAND). Sizes in canvas pixels: a style's fixed size and the
 * smallest size follow the canvas's `scale`.
 */
function fitAll(
  planned: Planned[],
  ctx: SKRSContext2D,
  options: PipelineOptions,
  scale: number,
): void {
  const min = Math.max(1, Math.round(MIN_SIZE * scale));
  const fixedOf = (t: TextData) =>
    t.style?.fontSize ? Math.max(1, Math.round(t.style.fontSize * scale)) : undefined;
  const fit = (e: Planned, max?: number) => {
    const family = fontFor(e.text, options, e.content);
    const areaW = e.area.box.x1 - e.area.box.x0;
    const areaH = e.area.box.y1 - e.area.box.y0;
    // Japanese and Chinese go vertical unless the area is clearly wide (a bubble lettered horizontally).
    const vertical =
      isVerticalScript(e.content) && (e.text.direction === 'vertical' || areaH >= areaW * 0.75);
    const measureAt = (size: number) => {
      ctx.font = cssFont(size, family, e.text);
      return { width: (s: string) => ctx.measureText(s).width };
    };
    const maxSize = Math.max(min, Math.min(areaH, areaW, max ?? Infinity));
    e.layout = fitInArea(e.area, e.content, vertical, measureAt, min, maxSize, fixedOf(e.text));
    e.size = e.layout?.size ?? 0;
    e.vertical = vertical;
    e.family = family;
  };
  for (const e of planned) fit(e);
  const free = planned.filter((e) => e.layout && !e.text.style?.fontSize);
  if (free.length >= 2) {
    const sizes = free.map((e) => e.size).sort((a, b) => a - b);
    const cap = Math.max(min, Math.floor(sizes[(sizes.length - 1) >> 1]! * SIZE_BAND));
    for (const e of free) if (e.size > cap) fit(e, cap);
  }
}

/** 3. One planned translation drawn, clipped to its lines, turned with its node. */
function draw(ctx: SKRSContext2D, e: Planned, layout: Layout, scale: number): void {
  const { node, text, r } = e;
  const t = node.transform;
  const { size } = layout;
  const vertical = !!e.vertical;
  const stroke = text.style?.stroke;
  ctx.save();
  ctx.beginPath();
  for (const l of layout.lines)
    ctx.rect(l.rect.x0, l.rect.y0, l.rect.x1 - l.rect.x0, l.rect.y1 - l.rect.y0);
  ctx.clip();
  if (t.rotationDeg) {
    ctx.translate(r.x0 + r.w / 2, r.y0 + r.h / 2);
    ctx.rotate((t.rotationDeg * Math.PI) / 180);
    ctx.translate(-(r.x0 + r.w / 2), -(r.y0 + r.h / 2));
  }
  ctx.font = cssFont(size, e.family!, text);
  const align = vertical ? 'center' : (text.style?.textAlign ?? 'center');
  ctx.textAlign = align;
  ctx.textBaseline = 'middle';
  const glyphs = (s: string, x: number, y: number) => {
    if (stroke && stroke.widthPx > 0) {
      ctx.strokeStyle = rgba(stroke.color);
      ctx.lineWidth = stroke.widthPx * scale * 2; // half of a centred stroke lies under the fill
      ctx.lineJoin = 'round';
      ctx.strokeText(s, x, y);
    }
    ctx.fillStyle = rgba(text.style?.color ?? [0, 0, 0, 255]);
    ctx.fillText(s, x, y);
  };
  for (const { text: line, rect } of layout.lines) {
    if (vertical) {
      const x = (rect.x0 + rect.x1) / 2;
      [...line].forEach((ch, k) => {
        const y = rect.y0 + size * VERTICAL_ADVANCE * (k + 0.5);
        if (!ROTATED_IN_COLUMNS.test(ch)) return glyphs(ch, x, y);
        // Long marks, brackets and dashes turn a quarter in a column.
        ctx.save();
        ctx.translate(x, y);
        ctx.rotate(Math.PI / 2);
        glyphs(ch, 0, 0);
        ctx.restore();
      });
    } else {
      const x = align === 'left' ? rect.x0 : align === 'right' ? rect.x1 : (rect.x0 + rect.x1) / 2;
      glyphs(line, x, (rect.y0 + rect.y1) / 2);
    }
  }
  ctx.restore();
}

/** A page rendered: the canvas, and the size each drawn translation was fitted at. */
export interface RenderedPage {
  canvas: Canvas;
  width: number;
  height: number;
  fitted: { node: Node; text: TextData; size: number }[];
}

/**
 * Renders the page's translations over its clean image — what the pipeline's
 * `renderer` step writes, and what an ask's thumbnails show (op-thumbnails.ts)
 * at `maxSide` pixels on the long side, with padding, stroke and sizes scaled.
 */
export async function renderPage(
  page: Page,
  blobs: BlobStore,
  options: PipelineOptions,
  { skipped, maxSide }: { skipped?: Skipped; maxSide?: number } = {},
): Promise<RenderedPage> {
  const base = await baseOf(page, blobs, maxSide);
  const nodes = textNodes(page, options.textNodeIds);
  if (!nodes.some(({ text }) => text.translation?.trim()))
    skipped?.(
      'nothingToDo',
      'No translation to draw on this page; its rendered image is the inpainted one.',
    );
  const planned = plan(page, nodes, base, skipped);
  fitAll(planned, base.ctx, options, base.scale);
  const fitted: RenderedPage['fitted'] = [];
  for (const e of planned) {
    if (!e.layout) continue;
    draw(base.ctx, e, e.layout, base.scale);
    fitted.push({ node: e.node, text: e.text, size: e.layout.size });
  }
  return { canvas: base.canvas, width: base.width, height: base.height, fitted };
}

export function createRendererEngine(): Engine {
  return {
    id: 'renderer',
    name: 'Renderer (draw translations inside their bubbles, horizontal or vertical)',
    needs: ['SourceImage', 'Translations'],
    uses: ['Inpainted'],
    produces: ['FinalRender'],
    async start(options) {
      return {
        async page({ page, blobs, skipped }) {
          const rendered = await renderPage(page, blobs, options, { skipped });
          const ops: Op[] = rendered.fitted
            .filter((f) => f.text.fontSizePx !== f.size)
            .map((f) => ({
              updateNode: {
                page: page.id,
                id: f.node.id,
                patch: { data: { text: { fontSizePx: f.size } } },
              },
            }));
          const hash = await blobs.put(await png(rendered.canvas));
          return [...putImageOps(page, 'rendered', hash, rendered.width, rendered.height), ...ops];
        },
      };
    },
  };
}
