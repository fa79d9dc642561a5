/**
 * No erasing without evidence (issue 32 item 3), in the fill: a text node an
 * engine read (it has a confidence) is erased only where the page's text
 * mask has pixels in its box, when its confidence is high enough, when it
 * is not larger than a few lines, and — once the page is translated — only
 * when it has a translation and is more than a lone glyph. Each block left
 * alone is said with its reason and node id. A node drawn by hand (no
 * confidence) is erased as before.
 */
import { describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { randomUUID } from 'node:crypto';
import { createFillEngine } from '../../../src/doors/scene/engines/fill.js';
import { createRendererEngine } from '../../../src/doors/scene/engines/renderer.js';
import { maskPng } from '../../../src/doors/scene/engines/pixels.js';
import type { SkipReason } from '../../../src/doors/scene/engines/registry.js';
import type { Node, Page, TextData } from '../../../src/doors/scene/model/model.js';
import { applyOp } from '../../../src/doors/scene/model/reducer.js';
import { emptyScene } from '../../../src/doors/scene/model/model.js';
import type { BlobStore } from '../../../src/kernel/store.js';
import { blobHash } from '../../../src/kernel/blob-hash.js';

function memoryBlobs(): BlobStore {
  const m = new Map<string, Uint8Array>();
  return {
    put: async (b) => {
      const h = blobHash(b);
      m.set(h, b);
      return h;
    },
    get: async (h) => m.get(h) ?? null,
    has: async (h) => m.has(h),
  };
}

const W = 300;
const H = 100;
/** Five dark marks on white, one in each 60 px slot. */
async function source() {
  const c = createCanvas(W, H);
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, W, H);
  g.fillStyle = '#000';
  for (let k = 0; k < 5; k++) g.fillRect(k * 60 + 20, 40, 20, 20);
  return new Uint8Array(await c.encode('png'));
}

const box = (k: number) => ({ x: k * 60 + 10, y: 30, width: 40, height: 40, rotationDeg: 0 });
const textNode = (k: number, text: TextData): Node => ({
  id: randomUUID(),
  transform: box(k),
  visible: true,
  kind: { text },
});

async function pageOf(blobs: BlobStore, texts: TextData[], maskSlots: number[]): Promise<Page> {
  const mask = new Uint8Array(W * H);
  for (const k of maskSlots)
    for (let y = 40; y < 60; y++)
      for (let x = k * 60 + 20; x < k * 60 + 40; x++) mask[y * W + x] = 1;
  const full = { x: 0, y: 0, width: W, height: H, rotationDeg: 0 };
  return {
    id: randomUUID(),
    name: 'p',
    width: W,
    height: H,
    nodes: [
      {
        id: randomUUID(),
        transform: full,
        visible: true,
        kind: {
          image: {
            role: 'source',
            blob: await blobs.put(await source()),
            opacity: 1,
            naturalWidth: W,
            naturalHeight: H,
          },
        },
      },
      {
        id: randomUUID(),
        transform: full,
        visible: false,
        kind: { mask: { role: 'segment', blob: await blobs.put(await maskPng(mask, W, H)) } },
      },
      ...texts.map((t, k) => textNode(k, t)),
    ],
  };
}

async function fill(page: Page, blobs: BlobStore) {
  const said: { reason: SkipReason; id?: string }[] = [];
  const ops = await (
    await createFillEngine().start({})
  ).page({
    page,
    pageIndex: 0,
    blobs,
    signal: new AbortController().signal,
    skipped: (reason, _message, where) => said.push({ reason, id: where?.textNodeId }),
  });
  let scene = applyOp(emptyScene('t', 'now'), { addPage: { page } }).state;
  scene = applyOp(scene, { batch: { label: 'fill', ops } }).state;
  const image = scene.pages[0]!.nodes.find(
    (n) => 'image' in n.kind && n.kind.image.role === 'inpainted',
  )!;
  const bytes = (await blobs.get('image' in image.kind ? image.kind.image.blob : ''))!;
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(W, H);
  c.getContext('2d').drawImage(img, 0, 0);
  const data = c.getContext('2d').getImageData(0, 0, W, H).data;
  /** Whether the mark in slot k was erased. */
  const erased = (k: number) => data[(50 * W + k * 60 + 30) * 4]! > 200;
  return { erased, said };
}

describe('fill on read text', () => {
  it('erases only read blocks with evidence and says why it left each other one alone', async () => {
    const blobs = memoryBlobs();
    const t = (text: string, extra: Partial<TextData> = {}): TextData => ({
      text,
      confidence: 0.9,
      translation: 'Hi',
      ...extra,
    });
    const texts = [
      t('こんにちは'), // evidence: erased
      t('こんにちは', { confidence: 0.2 }), // low confidence
      t('こんにちは'), // no text pixels in the mask: not text-like
      t('あ', { translation: undefined }), // a lone glyph left untranslated
      t('こんにちは', {
        linePolygons: Array.from({ length: 14 }, () => [
          [0, 0],
          [1, 0],
          [1, 1],
        ]),
      }), // more than a few lines
    ];
    const page = await pageOf(blobs, texts, [0, 1, 3, 4]);
    const { erased, said } = await fill(page, blobs);
    expect([0, 1, 2, 3, 4].map(erased)).toEqual([true, false, false, false, false]);
    const ids = page.nodes.filter((n) => 'text' in n.kind).map((n) => n.id);
    expect(said).toEqual([
      { reason: 'lowConfidence', id: ids[1] },
      { reason: 'notTextLike', id: ids[2] },
      { reason: 'loneGlyph', id: ids[3] },
      { reason: 'tooLarge', id: ids[4] },
    ]);
  });

  it('leaves a read block alone when the page is translated but it is not', async () => {
    const blobs = memoryBlobs();
    const page = await pageOf(
      blobs,
      [
        { text: 'やった', confidence: 0.9, translation: 'Yes' },
        { text: 'だめだ', confidence: 0.9 },
      ],
      [0, 1],
    );
    const { erased, said } = await fill(page, blobs);
    expect([erased(0), erased(1)]).toEqual([true, false]);
    expect(said.map((s) => s.reason)).toEqual(['untranslated']);
  });

  it('still erases a block drawn by hand (no confidence) from the pixels that stand out', async () => {
    const blobs = memoryBlobs();
    const page = await pageOf(blobs, [{ text: 'x' }], []);
    const { erased, said } = await fill(page, blobs);
    expect(erased(0)).toBe(true);
    expect(said).toEqual([]);
  });
});

describe('renderer on read text', () => {
  it('draws no translation over lettering the fill leaves in place, and says so', async () => {
    const blobs = memoryBlobs();
    const page = await pageOf(
      blobs,
      [{ text: 'やった', confidence: 0.1, translation: 'Yes' }],
      [0],
    );
    const said: SkipReason[] = [];
    const ops = await (
      await createRendererEngine().start({})
    ).page({
      page,
      pageIndex: 0,
      blobs,
      signal: new AbortController().signal,
      skipped: (reason) => said.push(reason),
    });
    expect(said).toEqual(['lowConfidence']);
    expect(ops.some((op) => 'updateNode' in op)).toBe(false); // no font size was fitted
  });
});
