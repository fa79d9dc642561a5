/** Engines and planning, in process (tesseract runs in flow.test.ts). */
import { describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { randomUUID } from 'node:crypto';
import { createFillEngine } from '../../../src/doors/scene/engines/fill.js';
import {
  numberSegments,
  parseNumbered,
  createLlmEngine,
} from '../../../src/doors/scene/engines/llm.js';
import { planSteps, type Engine } from '../../../src/doors/scene/engines/registry.js';
import {
  createRendererEngine,
  fitSize,
  fontFor,
  wrap,
} from '../../../src/doors/scene/engines/renderer.js';
import { regions } from '../../../src/doors/scene/engines/tesseract.js';
import { defaultFont } from '../../../src/doors/scene/files/images.js';
import type { Node, Page, TextData } from '../../../src/doors/scene/model/model.js';
import { applyOp } from '../../../src/doors/scene/model/reducer.js';
import { emptyScene } from '../../../src/doors/scene/model/model.js';
import type { BlobStore } from '../../../src/kernel/store.js';
import { blobHash } from '../../../src/kernel/blob-hash.js';
import { fakeLlm } from './server.js';

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

async function drawn(
  bg: string,
  draw?: (g: ReturnType<ReturnType<typeof createCanvas>['getContext']>) => void,
) {
  const c = createCanvas(200, 100);
  const g = c.getContext('2d');
  g.fillStyle = bg;
  g.fillRect(0, 0, 200, 100);
  draw?.(g);
  return new Uint8Array(await c.encode('png'));
}

async function rgbaAt(bytes: Uint8Array, x: number, y: number) {
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(img.width, img.height);
  c.getContext('2d').drawImage(img, 0, 0);
  return [...c.getContext('2d').getImageData(x, y, 1, 1).data];
}

function pageWith(
  blob: string,
  text: TextData,
  box = { x: 20, y: 20, width: 160, height: 60 },
): Page {
  return {
    id: randomUUID(),
    name: 'p',
    width: 200,
    height: 100,
    nodes: [
      {
        id: randomUUID(),
        transform: { x: 0, y: 0, width: 200, height: 100, rotationDeg: 0 },
        visible: true,
        kind: {
          image: { role: 'source', blob, opacity: 1, naturalWidth: 200, naturalHeight: 100 },
        },
      },
      { id: randomUUID(), transform: { ...box, rotationDeg: 0 }, visible: true, kind: { text } },
    ],
  };
}

const run = async (engine: Engine, page: Page, blobs: BlobStore, options = {}) =>
  (await engine.start(options)).page({
    page,
    pageIndex: 0,
    blobs,
    signal: new AbortController().signal,
  });

/** The page after the engine's batch, and the blob of its image of `role`. */
function applied(page: Page, ops: Awaited<ReturnType<typeof run>>, role: string) {
  let scene = emptyScene('t', 'now');
  scene = applyOp(scene, { addPage: { page } }).state;
  scene = applyOp(scene, { batch: { label: 'engine', ops } }).state;
  const out = scene.pages[0]!;
  const image = out.nodes.find((n: Node) => 'image' in n.kind && n.kind.image.role === role);
  return { page: out, blob: image && 'image' in image.kind ? image.kind.image.blob : null };
}

describe('fill', () => {
  it('erases a text region with the colour around it and leaves other pixels alone', async () => {
    const blobs = memoryBlobs();
    const source = await drawn('rgb(150, 200, 250)', (g) => {
      g.fillStyle = '#000';
      g.fillRect(40, 40, 100, 20); // "text" ink inside the region
      g.fillRect(0, 0, 5, 5); // art outside it
    });
    const page = pageWith(await blobs.put(source), { text: 'x' });
    const { blob } = applied(page, await run(createFillEngine(), page, blobs), 'inpainted');
    const out = (await blobs.get(blob!))!;
    expect(await rgbaAt(out, 60, 50)).toEqual([150, 200, 250, 255]);
    expect(await rgbaAt(out, 2, 2)).toEqual([0, 0, 0, 255]);
  });
});

describe('renderer', () => {
  const ctx = createCanvas(10, 10).getContext('2d');

  it('wraps words to the width and breaks a word longer than a line', () => {
    ctx.font = `20px "${defaultFont()}"`;
    const lines = wrap(ctx, 'the quick brown fox jumps', 80);
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(ctx.measureText(l).width).toBeLessThanOrEqual(80);
    expect(wrap(ctx, 'Supercalifragilistic', 60).length).toBeGreaterThan(1);
  });

  it('fits the largest font size whose wrapped lines fit the box', () => {
    const text: TextData = {};
    const small = fitSize(
      ctx,
      'a long translation that needs several lines',
      defaultFont(),
      text,
      100,
      60,
    );
    const big = fitSize(ctx, 'Hi', defaultFont(), text, 100, 60);
    expect(big).toBeGreaterThan(small);
    expect(big).toBeLessThanOrEqual(60);
  });

  it('uses the node font when installed, else defaultFont, else the bundled font', () => {
    const style = (f: string) => ({
      style: { fontFamilies: [f], color: [0, 0, 0, 255] as [number, number, number, number] },
    });
    expect(fontFor(style('Liberation Serif'), {})).toBe('Liberation Serif');
    expect(fontFor(style('Nope'), { defaultFont: 'DejaVu Serif' })).toBe('DejaVu Serif');
    expect(fontFor({}, { projectFont: 'Liberation Mono' })).toBe('Liberation Mono');
    expect(fontFor({}, {})).toBe('DejaVu Sans');
  });

  it('draws the translation in its colour with a stroke, aligned as the style says, inside the region only', async () => {
    const blobs = memoryBlobs();
    const source = await drawn('#ffffff');
    const inkColumns = async (align: 'left' | 'right') => {
      const page = pageWith(await blobs.put(source), {
        translation: 'HI',
        style: {
          fontFamilies: [],
          fontSize: 30,
          color: [255, 0, 0, 255],
          stroke: { color: [0, 0, 255, 255], widthPx: 2 },
          textAlign: align,
        },
      });
      const { blob } = applied(page, await run(createRendererEngine(), page, blobs), 'rendered');
      const img = await loadImage(Buffer.from((await blobs.get(blob!))!));
      const c = createCanvas(200, 100);
      c.getContext('2d').drawImage(img, 0, 0);
      const data = c.getContext('2d').getImageData(0, 0, 200, 100).data;
      const xs: number[] = [];
      let red = 0;
      let blue = 0;
      for (let y = 0; y < 100; y++)
        for (let x = 0; x < 200; x++) {
          const i = (y * 200 + x) * 4;
          if (data[i] === 255 && data[i + 1] === 255 && data[i + 2] === 255) continue;
          expect(x >= 20 && x < 180 && y >= 20 && y < 80).toBe(true);
          xs.push(x);
          if (data[i]! > 200 && data[i + 2]! < 60) red++;
          if (data[i + 2]! > 200 && data[i]! < 60) blue++;
        }
      expect(red).toBeGreaterThan(20);
      expect(blue).toBeGreaterThan(20);
      return { min: Math.min(...xs), max: Math.max(...xs) };
    };
    const left = await inkColumns('left');
    const right = await inkColumns('right');
    expect(left.min).toBeLessThan(30);
    expect(right.max).toBeGreaterThan(170);
  });
});

describe('llm', () => {
  it('numbers segments one per line and maps a reordered, multi-line reply back by number', () => {
    expect(numberSegments(['a\nb', 'c'])).toBe('1: a b\n2: c');
    const parsed = parseNumbered('2: dois\n1) um\ncontinua\n[3] três');
    expect([...parsed.entries()]).toEqual([
      [2, 'dois'],
      [1, 'um\ncontinua'],
      [3, 'três'],
    ]);
  });

  it('fails the page when the reply misses a segment, naming it', async () => {
    const llm = await fakeLlm();
    try {
      const engine = createLlmEngine(() => ({ baseUrl: llm.url }));
      const page = pageWith('a'.repeat(64), { text: 'ONE' });
      page.nodes.push({ ...page.nodes[1]!, id: randomUUID(), kind: { text: { text: 'TWO' } } });
      const ops = await run(engine, page, memoryBlobs(), { targetLanguage: 'Portuguese' });
      expect(ops).toHaveLength(2);
      llm.omit = 2;
      await expect(run(engine, page, memoryBlobs())).rejects.toThrow('no segment 2');
    } finally {
      await llm.close();
    }
  });

  it('refuses to start without a base URL, saying how to configure it', async () => {
    await expect(createLlmEngine(() => ({})).start({})).rejects.toThrow(/AIRLOCK_LLM_BASE_URL/);
  });
});

describe('planning and regions', () => {
  const engines = new Map(
    [
      createFillEngine(),
      createRendererEngine(),
      createLlmEngine(() => ({ baseUrl: 'http://127.0.0.1:1/v1' })),
    ].map((e) => [e.id, e]),
  );
  it('orders steps by dependency whatever order they were given', () => {
    const page = pageWith('a'.repeat(64), { text: 'x' });
    expect(planSteps(engines, ['renderer', 'llm', 'fill'], [page]).map((e) => e.id)).toEqual([
      'llm',
      'fill',
      'renderer',
    ]);
  });

  it('refuses a plan whose engine is not configured with unavailable naming the setting, before any job', () => {
    const page = pageWith('a'.repeat(64), { text: 'x' });
    const unconfigured = new Map([['llm', createLlmEngine(() => ({}))]]);
    let refused: unknown;
    try {
      planSteps(unconfigured, ['llm'], [page]);
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/step 'llm'.*scene\.llm\.baseUrl.*AIRLOCK_LLM_BASE_URL/),
      data: { field: 'steps', step: 'llm' },
    });
  });

  it('groups OCR lines into one region per bubble', () => {
    const line = (x0: number, y0: number, x1: number, y1: number) => ({ bbox: { x0, y0, x1, y1 } });
    const grouped = regions([line(10, 10, 90, 30), line(12, 34, 80, 54), line(10, 150, 90, 170)]);
    expect(grouped.map((r) => r.length)).toEqual([2, 1]);
  });
});
