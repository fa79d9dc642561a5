/**
 * Small before/after pictures of the pages a scene op touches, for the
 * owner's ask card (issue 27). Each is the page as the door's renderer
 * (engines/renderer.ts, the pipeline's `renderer` step) letters it — the
 * translations drawn into their bubbles over the clean image — rendered at
 * RENDER_MAX pixels on the long side (a full-size render takes most of a
 * second per page), scaled down, with each visible text node's box outlined
 * thinly, so a removed bubble's lettering and box are gone from "after" and a
 * changed translation reads differently. A PNG data URL, at most THUMB_MAX
 * pixels on its long side and THUMB_BYTES in size (past that it is drawn
 * smaller); when the render fails (no image, an unreadable blob) or stays too
 * big, the page is drawn as its boxes alone, each with its text; at most
 * THUMB_PAGES pages.
 */
import { createHash } from 'node:crypto';
import { createCanvas, type Canvas, type SKRSContext2D } from '@napi-rs/canvas';
import type { BlobStore } from '../../../kernel/index.js';
import { defaultFont, png } from '../files/images.js';
import { textOf, type Page, type Scene } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { opsInWords } from './op-words.js';
import { renderPage } from '../engines/renderer.js';

export const THUMB_MAX = 128;
export const THUMB_PAGES = 3;
export const THUMB_BYTES = 24 * 1024;
/** The renderer draws a thumbnail's page this large, twice the thumbnail, so scaling down smooths the lettering. */
export const RENDER_MAX = 2 * THUMB_MAX;

function letter(ctx: SKRSContext2D, text: string, x: number, y: number, w: number, h: number) {
  const size = Math.max(4, Math.min(10, h / 2.2));
  ctx.font = `${size}px "${defaultFont()}"`;
  ctx.fillStyle = '#111';
  const words = text.split(/\s+/).filter(Boolean);
  let line = '';
  let row = 0;
  const flush = () => {
    if (line && (row + 1) * size * 1.1 <= h + size * 0.2)
      ctx.fillText(line, x + 1, y + (row + 1) * size);
    row++;
    line = '';
  };
  for (const word of words) {
    const candidate = line ? `${line} ${word}` : word;
    if (line && ctx.measureText(candidate).width > w - 2) {
      flush();
      line = word;
    } else line = candidate;
  }
  flush();
}

const sizeOf = (page: Page, max: number) => {
  const scale = Math.min(1, max / Math.max(page.width, page.height, 1));
  return {
    scale,
    w: Math.max(1, Math.round(page.width * scale)),
    h: Math.max(1, Math.round(page.height * scale)),
  };
};

/** The page's render scaled to `max`, each visible text node's box outlined. */
function scaled(page: Page, render: Canvas, max: number): Promise<Uint8Array> {
  const { scale, w, h } = sizeOf(page, max);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(render, 0, 0, w, h);
  ctx.strokeStyle = 'rgba(221, 51, 51, 0.6)';
  ctx.lineWidth = 1;
  for (const node of page.nodes) {
    if (!textOf(node) || !node.visible) continue;
    const t = node.transform;
    ctx.strokeRect(t.x * scale + 0.5, t.y * scale + 0.5, t.width * scale - 1, t.height * scale - 1);
  }
  return png(canvas);
}

/** The fallback: no image, each visible text node as its box with its translation (else its text). */
function boxes(page: Page): Promise<Uint8Array> {
  const { scale, w, h } = sizeOf(page, THUMB_MAX);
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  for (const node of page.nodes) {
    const text = textOf(node);
    if (!text || !node.visible) continue;
    const t = node.transform;
    const [x, y, bw, bh] = [t.x * scale, t.y * scale, t.width * scale, t.height * scale];
    ctx.strokeStyle = '#d33';
    ctx.lineWidth = 1;
    ctx.strokeRect(x, y, bw, bh);
    letter(ctx, text.translation || text.text || '', x, y, bw, bh);
  }
  return png(canvas);
}

/**
 * Thumbnails drawn lately, by the page's content: an agent retrying a call
 * that waits for the owner costs no image decoding after the first time.
 */
const drawn = new Map<string, string>();
const DRAWN_KEPT = 64;

/**
 * The page as a small PNG data URL, bounded in size; `font` is the
 * project's default font, which the renderer uses as the pipeline does.
 */
export async function pageThumbnail(page: Page, blobs: BlobStore, font?: string): Promise<string> {
  const key = createHash('sha256')
    .update(JSON.stringify([page, font ?? null]))
    .digest('hex');
  const hit = drawn.get(key);
  if (hit !== undefined) return hit;
  const url = await drawThumbnail(page, blobs, font);
  if (drawn.size >= DRAWN_KEPT) drawn.delete(drawn.keys().next().value!);
  drawn.set(key, url);
  return url;
}

async function drawThumbnail(page: Page, blobs: BlobStore, font?: string): Promise<string> {
  let render: Canvas | null = null;
  try {
    render = (await renderPage(page, blobs, { projectFont: font }, { maxSide: RENDER_MAX })).canvas;
  } catch {
    // No image, or one that cannot be read: the boxes alone still show what changes.
  }
  let bytes: Uint8Array | null = null;
  // A busy image compresses badly: smaller first, then the boxes alone.
  for (const max of [THUMB_MAX, 96, 64]) {
    if (!render || (bytes && bytes.byteLength <= THUMB_BYTES)) break;
    bytes = await scaled(page, render, max);
  }
  if (!bytes || bytes.byteLength > THUMB_BYTES) bytes = await boxes(page);
  return `data:image/png;base64,${Buffer.from(bytes).toString('base64')}`;
}

export interface PageThumbnails {
  page: string;
  before: string;
  /** Null: the op removes the page. */
  after: string | null;
}

/** Before/after thumbnails of the first THUMB_PAGES pages touched. */
export async function thumbnailsOf(
  pages: readonly { id: string; before: Page; after: Page | null }[],
  blobs: BlobStore,
  pageLabel: (id: string) => string,
  font?: string,
): Promise<PageThumbnails[]> {
  return Promise.all(
    pages.slice(0, THUMB_PAGES).map(async (p) => ({
      page: pageLabel(p.id),
      before: await pageThumbnail(p.before, blobs, font),
      after: p.after ? await pageThumbnail(p.after, blobs, font) : null,
    })),
  );
}

/**
 * What an ask's card shows of `ops` beyond its summary: each op in words
 * (`changes`, one per line), the totals, and before/after thumbnails of the
 * pages touched (none when the project keeps no blobs at hand).
 */
export async function opsPreviewDetails(
  scene: Scene,
  ops: readonly Op[],
  blobs: BlobStore | null,
): Promise<{ changes: string; totals: string; thumbnails?: PageThumbnails[] }> {
  const words = opsInWords(scene, ops);
  const label = (id: string) => {
    const i = scene.pages.findIndex((p) => p.id === id);
    return `page ${i + 1} "${scene.pages[i]?.name ?? id}"`;
  };
  const thumbnails =
    blobs && words.pages.length > 0
      ? await thumbnailsOf(words.pages, blobs, label, scene.project.style.defaultFont)
      : [];
  return {
    changes: words.lines.join('\n'),
    totals: words.totals,
    ...(thumbnails.length > 0 ? { thumbnails } : {}),
  };
}
