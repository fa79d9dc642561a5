/**
 * The scene engines on manga-like pages (issue 18), in process: bubble
 * segmentation, ink direction, reading order, mask-only inpainting and
 * rendering inside the bubble. Pages come from the benchmark's generator
 * (bench/engines-pages.mjs: flat, gradient and screentone backgrounds,
 * English and vertical Japanese in real fonts). OCR itself runs end to end
 * in flow.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { fontsPresent, generatePage, type GeneratedPage } from '../../../bench/engines-pages.mjs';
import { findBubbles } from '../../../src/doors/scene/engines/bubbles.js';
import { inpaint } from '../../../src/doors/scene/engines/inpaint.js';
import { dilate, luma, maskPng } from '../../../src/doors/scene/engines/pixels.js';
import { createRendererEngine } from '../../../src/doors/scene/engines/renderer.js';
import { inkDirection, readingOrder } from '../../../src/doors/scene/engines/text-layout.js';
import { cleanText, joinWords } from '../../../src/doors/scene/engines/tesseract.js';
import { emptyScene, type Page } from '../../../src/doors/scene/model/model.js';
import { applyOp } from '../../../src/doors/scene/model/reducer.js';
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

async function rgbaOf(bytes: Uint8Array) {
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(img.width, img.height);
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  return g.getImageData(0, 0, img.width, img.height).data;
}

const pages: GeneratedPage[] = [];
beforeAll(async () => {
  const fonts = fontsPresent();
  if (!fonts.latin || !fonts.cjk)
    throw new Error(
      `these tests draw pages in DejaVu Sans and Noto Sans CJK JP, which are not both installed (${JSON.stringify(fonts)}); apt-get install fonts-dejavu-core fonts-noto-cjk`,
    );
  // 0 en flat, 1 ja flat, 2 en gradient, 3 ja gradient, 4 en screentone, 5 ja screentone.
  for (let i = 0; i < 6; i++) pages.push(await generatePage(i));
});

const centreOf = (b: { x0: number; y0: number; x1: number; y1: number }) => [
  Math.floor((b.x0 + b.x1) / 2),
  Math.floor((b.y0 + b.y1) / 2),
];

describe('bubble segmentation', () => {
  it('finds every outlined bubble on flat, gradient and screentone pages, and nothing else', async () => {
    for (const page of pages) {
      const rgba = await rgbaOf(page.png);
      const bubbles = findBubbles(luma(rgba, page.width * page.height), page.width, page.height);
      const outlined = page.blocks.filter((b) => b.polygon);
      const at = (mask: Uint8Array, [x, y]: number[]) => mask[y! * page.width + x!] === 1;
      for (const block of outlined)
        expect(
          bubbles.some((b) => at(b.area, centreOf(block.box))),
          `page ${page.index} (${page.background}): bubble around "${block.text}"`,
        ).toBe(true);
      for (const bubble of bubbles)
        expect(
          outlined.some((block) => at(bubble.area, centreOf(block.box))),
          `page ${page.index} (${page.background}): a bubble at ${JSON.stringify(bubble.box)} holds no text`,
        ).toBe(true);
    }
  });

  it('tells vertical Japanese columns from horizontal English lines by the ink alone', async () => {
    for (const page of pages) {
      const rgba = await rgbaOf(page.png);
      const bubbles = findBubbles(luma(rgba, page.width * page.height), page.width, page.height);
      expect(bubbles.length).toBeGreaterThan(0);
      for (const b of bubbles) {
        // The opposite preference, so ties cannot pass the test.
        const prefer = page.lang === 'ja' ? 'horizontal' : 'vertical';
        expect(inkDirection(b.ink, page.width, b.inkBox, prefer), `page ${page.index}`).toBe(
          page.lang === 'ja' ? 'vertical' : 'horizontal',
        );
      }
    }
  });
});

describe('reading order', () => {
  const box = (x0: number, y0: number) => ({
    box: { x0, y0, x1: x0 + 50, y1: y0 + 80 },
    id: `${x0},${y0}`,
  });
  const regions = [box(20, 30), box(300, 40), box(160, 20), box(40, 400), box(320, 390)];

  it('reads manga rows top to bottom, right to left within a row', () => {
    expect(readingOrder(regions, true).map((r) => r.id)).toEqual([
      '300,40',
      '160,20',
      '20,30',
      '320,390',
      '40,400',
    ]);
  });

  it('reads left to right within a row otherwise', () => {
    expect(readingOrder(regions, false).map((r) => r.id)).toEqual([
      '20,30',
      '160,20',
      '300,40',
      '40,400',
      '320,390',
    ]);
  });
});

describe('OCR text', () => {
  const word = (text: string, x0: number, y0: number, w = 40, h = 14) => ({
    text,
    confidence: 90,
    bbox: { x0, y0, x1: x0 + w, y1: y0 + h },
  });

  it('keeps a caption apart from the bubble line it sits beside when joining words into lines', () => {
    const lines = joinWords(
      [word('THE', 100, 50), word('DOOR', 145, 50), word('DID', 400, 52), word('YOU', 445, 52)],
      'horizontal',
      ' ',
    );
    expect(lines.map((l) => l.text)).toEqual(['THE DOOR', 'DID YOU']);
  });

  it('joins vertical Japanese words down a column, columns apart', () => {
    const lines = joinWords(
      [
        word('あり', 300, 100, 20, 40),
        word('がとう', 300, 145, 20, 60),
        word('ここ', 200, 100, 20, 40),
      ],
      'vertical',
      '',
    );
    expect(lines.map((l) => l.text).sort()).toEqual(['ありがとう', 'ここ']);
  });

  it('reads comic capitals: a lone 1 is an I, and CJK loses the spaces tesseract puts between glyphs', () => {
    expect(cleanText(['1 TOLD', 'YOU so'], 'en')).toBe('I TOLD\nYOU SO');
    expect(cleanText(['Version 1 of it'], 'en')).toBe('Version 1 of it');
    expect(cleanText(['あ り が と う'], 'ja')).toBe('ありがとう');
  });
});

describe('inpainting', () => {
  it('changes only the text mask, and screentone and gradients come back under the letters', async () => {
    for (const page of pages.filter((p) => p.background !== 'flat')) {
      const { width, height } = page;
      const rgba = await rgbaOf(page.png);
      const before = rgba.slice();
      const clean = await rgbaOf(page.cleanPng);
      const mask = dilate(page.textMask, width, height, 2);
      inpaint(rgba, width, height, mask);
      let changedOutside = 0;
      let diff = 0;
      let n = 0;
      for (let i = 0; i < width * height; i++) {
        for (let c = 0; c < 4; c++)
          if (!mask[i] && rgba[i * 4 + c] !== before[i * 4 + c]) changedOutside++;
        if (page.textMask[i]) {
          diff += Math.abs(rgba[i * 4]! - clean[i * 4]!);
          n++;
        }
      }
      expect(changedOutside, `page ${page.index}`).toBe(0);
      // Black letters on tone or gradient differ from the artwork by ~100–200 on average.
      expect(diff / n, `page ${page.index} (${page.background}) mean error`).toBeLessThan(8);
    }
  });
});

describe('rendering inside the bubble', () => {
  async function bubblePage(
    translation: string,
    direction: 'horizontal' | 'vertical',
    rx = 110,
    ry = 90,
  ) {
    const W = 320;
    const H = 240;
    const art = createCanvas(W, H);
    const g = art.getContext('2d');
    g.fillStyle = 'rgb(150,150,160)';
    g.fillRect(0, 0, W, H);
    g.beginPath();
    g.ellipse(160, 120, rx, ry, 0, 0, Math.PI * 2);
    g.fillStyle = '#fff';
    g.fill();
    g.lineWidth = 3;
    g.strokeStyle = '#000';
    g.stroke();
    const inside = new Uint8Array(W * H);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        if (((x - 160) / (rx - 3)) ** 2 + ((y - 120) / (ry - 3)) ** 2 <= 1) inside[y * W + x] = 1;
    const blobs = memoryBlobs();
    const source = await blobs.put(new Uint8Array(await art.encode('png')));
    const mask = await blobs.put(await maskPng(inside, W, H));
    const page: Page = {
      id: randomUUID(),
      name: 'bubble',
      width: W,
      height: H,
      nodes: [
        {
          id: randomUUID(),
          transform: { x: 0, y: 0, width: W, height: H, rotationDeg: 0 },
          visible: true,
          kind: {
            image: { role: 'source', blob: source, opacity: 1, naturalWidth: W, naturalHeight: H },
          },
        },
        {
          id: randomUUID(),
          transform: { x: 0, y: 0, width: W, height: H, rotationDeg: 0 },
          visible: false,
          kind: { mask: { role: 'bubble', blob: mask } },
        },
        {
          id: randomUUID(),
          // The box of the source text: smaller than the bubble, off centre.
          transform: { x: 120, y: 80, width: 60, height: 70, rotationDeg: 0 },
          visible: true,
          kind: { text: { text: 'x', translation, direction } },
        },
      ],
    };
    const run = await createRendererEngine().start({});
    const ops = await run.page({ page, pageIndex: 0, blobs, signal: new AbortController().signal });
    const added = ops.find((o) => 'addNode' in o);
    const node = added && 'addNode' in added ? added.addNode.node : null;
    const hash = node && 'image' in node.kind ? node.kind.image.blob : '';
    const after = await rgbaOf((await blobs.get(hash))!);
    const before = await rgbaOf((await blobs.get(source))!);
    let outside = 0;
    let inked = 0;
    let x0 = W;
    let x1 = 0;
    let y0 = H;
    let y1 = 0;
    for (let i = 0; i < W * H; i++) {
      const changed = [0, 1, 2].some((c) => after[i * 4 + c] !== before[i * 4 + c]);
      if (!changed) continue;
      if (!inside[i]) outside++;
      inked++;
      const x = i % W;
      const y = (i - x) / W;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
    return { outside, inked, w: x1 - x0, h: y1 - y0, ops };
  }

  it('fits horizontal text inside the bubble shape, larger than its text box allows, with no pixel outside', async () => {
    const r = await bubblePage('WE HAVE TO LEAVE THIS PLACE RIGHT NOW', 'horizontal');
    expect(r.outside).toBe(0);
    expect(r.inked).toBeGreaterThan(200);
    // The text used the bubble, not only the 60 px box it came from.
    expect(r.w).toBeGreaterThan(60);
    expect(r.w).toBeGreaterThan(r.h);
  });

  it('sets Japanese vertically, in columns, with no pixel outside the bubble', async () => {
    const r = await bubblePage('まだ終わってないよ本当に', 'vertical', 70, 110);
    expect(r.outside).toBe(0);
    expect(r.inked).toBeGreaterThan(200);
    expect(r.h).toBeGreaterThan(r.w);
  });
});

describe('project source language', () => {
  it('is a project style field that updateProjectMeta sets and undo clears', () => {
    const scene = emptyScene('p', '2026-01-01T00:00:00Z');
    const set = applyOp(scene, {
      updateProjectMeta: { patch: { style: { sourceLanguage: 'ja' } } },
    });
    expect(set.state.project.style.sourceLanguage).toBe('ja');
    const undone = applyOp(set.state, set.inverse);
    expect(undone.state.project.style.sourceLanguage).toBeUndefined();
  });
});
