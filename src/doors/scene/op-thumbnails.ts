/**
 * Small before/after pictures of the pages a scene op touches, for the
 * owner's ask card (issue 27). Each is drawn by the door from the page
 * model: the page's clean image (inpainted, else source) scaled down, and
 * every visible text node as its box with its translation (else its text)
 * lettered inside — so a removed bubble is gone from "after", a changed
 * translation reads differently. A PNG data URL, at most THUMB_MAX pixels on
 * its long side and THUMB_BYTES in size (past that it is drawn smaller, then
 * without the image, only the boxes); at most THUMB_PAGES pages.
 */
import { createHash } from 'node:crypto';
import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import type { BlobStore } from '../../kernel/index.js';
import { decode, defaultFont, imageNode, png } from './images.js';
import { textOf, type Page, type Scene } from './model.js';
import type { Op } from './ops.js';
import { opsInWords } from './op-words.js';

export const THUMB_MAX = 128;
export const THUMB_PAGES = 3;
export const THUMB_BYTES = 24 * 1024;

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

async function draw(
  page: Page,
  blobs: BlobStore,
  withImage: boolean,
  max = THUMB_MAX,
): Promise<Uint8Array> {
  const scale = Math.min(1, max / Math.max(page.width, page.height, 1));
  const w = Math.max(1, Math.round(page.width * scale));
  const h = Math.max(1, Math.round(page.height * scale));
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, w, h);
  const clean = imageNode(page, 'inpainted') ?? imageNode(page, 'source');
  if (withImage && clean) {
    try {
      const bytes = await blobs.get(clean.image.blob);
      if (bytes) ctx.drawImage(await decode(bytes), 0, 0, w, h);
    } catch {
      // An unreadable image: the boxes alone still show what changes.
    }
  }
  for (const node of page.nodes) {
    const text = textOf(node);
    if (!text || !node.visible) continue;
    const t = node.transform;
    const [x, y, bw, bh] = [t.x * scale, t.y * scale, t.width * scale, t.height * scale];
    ctx.fillStyle = 'rgba(255,255,255,0.85)';
    ctx.fillRect(x, y, bw, bh);
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

/** The page as a small PNG data URL, bounded in size. */
export async function pageThumbnail(page: Page, blobs: BlobStore): Promise<string> {
  const key = createHash('sha256').update(JSON.stringify(page)).digest('hex');
  const hit = drawn.get(key);
  if (hit !== undefined) return hit;
  const url = await drawThumbnail(page, blobs);
  if (drawn.size >= DRAWN_KEPT) drawn.delete(drawn.keys().next().value!);
  drawn.set(key, url);
  return url;
}

async function drawThumbnail(page: Page, blobs: BlobStore): Promise<string> {
  // A busy image compresses badly: smaller first, then the boxes alone.
  let bytes = await draw(page, blobs, true);
  for (const max of [96, 64])
    if (bytes.byteLength > THUMB_BYTES) bytes = await draw(page, blobs, true, max);
  if (bytes.byteLength > THUMB_BYTES) bytes = await draw(page, blobs, false);
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
): Promise<PageThumbnails[]> {
  return Promise.all(
    pages.slice(0, THUMB_PAGES).map(async (p) => ({
      page: pageLabel(p.id),
      before: await pageThumbnail(p.before, blobs),
      after: p.after ? await pageThumbnail(p.after, blobs) : null,
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
    blobs && words.pages.length > 0 ? await thumbnailsOf(words.pages, blobs, label) : [];
  return {
    changes: words.lines.join('\n'),
    totals: words.totals,
    ...(thumbnails.length > 0 ? { thumbnails } : {}),
  };
}
