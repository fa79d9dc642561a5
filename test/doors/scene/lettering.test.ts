/**
 * Lettering (issue 32 item 5): Comic Neue for Latin text and Noto CJK for
 * CJK, one text per bubble, font sizes held in a band across the page, and
 * long marks turned in vertical columns.
 */
import { describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { randomUUID } from 'node:crypto';
import { maskPng } from '../../../src/doors/scene/engines/pixels.js';
import type { SkipReason } from '../../../src/doors/scene/engines/registry.js';
import {
  createRendererEngine,
  fontFor,
  SIZE_BAND,
} from '../../../src/doors/scene/engines/renderer.js';
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

const W = 600;
const H = 300;
type Rect = { x: number; y: number; width: number; height: number };

/** A white page, bubbles as rectangles in the bubble mask, and text nodes in boxes. */
async function pageOf(blobs: BlobStore, bubbles: Rect[], texts: [Rect, TextData][]): Promise<Page> {
  const c = createCanvas(W, H);
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, W, H);
  const mask = new Uint8Array(W * H);
  for (const b of bubbles)
    for (let y = b.y; y < b.y + b.height; y++)
      for (let x = b.x; x < b.x + b.width; x++) mask[y * W + x] = 1;
  const full = { x: 0, y: 0, width: W, height: H, rotationDeg: 0 };
  const image = await blobs.put(new Uint8Array(await c.encode('png')));
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
          image: { role: 'source', blob: image, opacity: 1, naturalWidth: W, naturalHeight: H },
        },
      },
      {
        id: randomUUID(),
        transform: full,
        visible: false,
        kind: { mask: { role: 'bubble', blob: await blobs.put(await maskPng(mask, W, H)) } },
      },
      ...texts.map(([box, text]): Node => ({
        id: randomUUID(),
        transform: { ...box, rotationDeg: 0 },
        visible: true,
        kind: { text },
      })),
    ],
  };
}

async function render(page: Page, blobs: BlobStore) {
  const said: { reason: SkipReason; id?: string }[] = [];
  const ops = await (
    await createRendererEngine().start({})
  ).page({
    page,
    pageIndex: 0,
    blobs,
    signal: new AbortController().signal,
    skipped: (reason, _m, where) => said.push({ reason, id: where?.textNodeId }),
  });
  let scene = applyOp(emptyScene('t', 'now'), { addPage: { page } }).state;
  scene = applyOp(scene, { batch: { label: 'render', ops } }).state;
  const out = scene.pages[0]!;
  const node = out.nodes.find((n) => 'image' in n.kind && n.kind.image.role === 'rendered')!;
  const img = await loadImage(
    Buffer.from((await blobs.get('image' in node.kind ? node.kind.image.blob : ''))!),
  );
  const c = createCanvas(W, H);
  c.getContext('2d').drawImage(img, 0, 0);
  const data = c.getContext('2d').getImageData(0, 0, W, H).data;
  const dark = (x: number, y: number) => data[(y * W + x) * 4]! < 128;
  const sizes = out.nodes.flatMap((n) => ('text' in n.kind ? [n.kind.text.fontSizePx] : []));
  return { said, dark, sizes };
}

describe('lettering', () => {
  it('sets Latin text in Comic Neue, CJK text in Noto CJK, other scripts in DejaVu Sans', () => {
    expect(fontFor({}, {}, 'WAIT FOR ME!')).toBe('Comic Neue');
    expect(fontFor({}, {}, '待って')).toMatch(/^Noto (Sans|Serif) CJK/);
    expect(fontFor({}, {}, 'ПОДОЖДИ')).toBe('DejaVu Sans');
  });

  it('draws one text per bubble: a second box in the bubble joins the first', async () => {
    const blobs = memoryBlobs();
    const bubble = { x: 20, y: 20, width: 260, height: 200 };
    const page = await pageOf(
      blobs,
      [bubble],
      [
        [
          { x: 60, y: 40, width: 180, height: 40 },
          { text: 'a', translation: 'FIRST' },
        ],
        [
          { x: 60, y: 150, width: 180, height: 40 },
          { text: 'b', translation: 'SECOND' },
        ],
      ],
    );
    const { said, sizes } = await render(page, blobs);
    const second = page.nodes.filter((n) => 'text' in n.kind)[1]!.id;
    expect(said).toEqual([{ reason: 'merged', id: second }]);
    expect(sizes[0]).toBeGreaterThan(6);
    expect(sizes[1]).toBeUndefined(); // never fitted: not drawn on its own
  });

  it('keeps neighbouring bubbles within a size band of the page', async () => {
    const blobs = memoryBlobs();
    const boxes = [
      { x: 10, y: 10, width: 120, height: 80 },
      { x: 150, y: 10, width: 130, height: 90 },
      { x: 300, y: 10, width: 290, height: 280 },
    ];
    const page = await pageOf(
      blobs,
      boxes,
      boxes.map((b) => [{ ...b }, { text: 'x', translation: 'HEY YOU' }]),
    );
    const { sizes } = await render(page, blobs);
    const fitted = sizes.map(Number);
    const median = [...fitted].sort((a, b) => a - b)[1]!;
    expect(Math.max(...fitted)).toBeLessThanOrEqual(Math.floor(median * SIZE_BAND));
    expect(Math.max(...fitted)).toBeGreaterThanOrEqual(median); // the big bubble is not shrunk below the rest
  });

  it('turns the long vowel mark a quarter in a vertical column', async () => {
    const blobs = memoryBlobs();
    const box = { x: 250, y: 10, width: 60, height: 280 };
    const page = await pageOf(
      blobs,
      [box],
      [[box, { text: 'x', translation: 'ああーー', direction: 'vertical' }]],
    );
    const { dark } = await render(page, blobs);
    // The ink's extent, then the marks' part of it (the lower half): taller than wide once turned.
    const extent = (top: number) => {
      let [x0, x1, y0, y1] = [W, 0, H, 0];
      for (let y = top; y < H; y++)
        for (let x = 0; x < W; x++)
          if (dark(x, y)) {
            [x0, x1] = [Math.min(x0, x), Math.max(x1, x)];
            [y0, y1] = [Math.min(y0, y), Math.max(y1, y)];
          }
      return { x0, x1, y0, y1 };
    };
    const all = extent(0);
    const marks = extent(Math.ceil(all.y0 + 0.55 * (all.y1 - all.y0)));
    expect(marks.x1).toBeGreaterThan(marks.x0);
    expect((marks.y1 - marks.y0) / (marks.x1 - marks.x0)).toBeGreaterThan(3);
  });
});
