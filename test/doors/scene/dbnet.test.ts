/**
 * The learned detector engine `dbnet` (issue 32 items 1–3), in process:
 * PaddleOCR's DB model finds the text lines, lines are grouped into one
 * block per bubble (or by orientation and spacing outside bubbles), each
 * block is read alone, and only blocks with evidence become text nodes and
 * text pixels for the fill. Pages come from the benchmark's generator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { fontsPresent, generatePage, type GeneratedPage } from '../../../bench/engines-pages.mjs';
import {
  detectBlocks,
  inkOf,
  judge,
  MIN_INK_COMPONENT_PX,
} from '../../../src/doors/scene/engines/dbnet.js';
import { luma } from '../../../src/doors/scene/engines/pixels.js';
import { ocrWorkers } from '../../../src/doors/scene/engines/ocr-models.js';
import type { Box } from '../../../src/doors/scene/engines/pixels.js';
import { groupBlocks } from '../../../src/doors/scene/engines/text-blocks.js';
import { withSpaces } from '../../../src/doors/scene/engines/text-reader.js';
import { detectLines, linesOfMap } from '../../../src/doors/scene/engines/text-lines.js';

const workers = ocrWorkers();
const pages: GeneratedPage[] = [];
beforeAll(async () => {
  const fonts = fontsPresent();
  if (!fonts.latin || !fonts.cjk)
    throw new Error(
      'these tests draw pages in DejaVu Sans and Noto Sans CJK JP: apt-get install fonts-dejavu-core fonts-noto-cjk',
    );
  pages.push(await generatePage(0), await generatePage(3)); // en flat, ja gradient
});
afterAll(() => workers.close());

async function pixelsOf(bytes: Uint8Array, draw?: (g: CanvasRenderingContext2D) => void) {
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(img.width, img.height);
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  draw?.(g as unknown as CanvasRenderingContext2D);
  return g.getImageData(0, 0, img.width, img.height).data;
}

const iou = (a: Box, b: Box) => {
  const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const area = (r: Box) => (r.x1 - r.x0) * (r.y1 - r.y0);
  return (w * h) / (area(a) + area(b) - w * h);
};

describe('DB text lines', () => {
  it('turns a probability map into one grown box per connected line, and drops faint blobs', () => {
    const w = 40;
    const h = 20;
    const prob = new Float32Array(w * h);
    for (let y = 4; y < 8; y++) for (let x = 5; x < 30; x++) prob[y * w + x] = 0.9; // a line
    for (let y = 12; y < 16; y++) for (let x = 5; x < 15; x++) prob[y * w + x] = 0.4; // faint
    const lines = linesOfMap(prob, w, h, 0.3, 0.6, 1.5);
    expect(lines).toHaveLength(1);
    // Unclip: 25×4 grows by 25·4·1.5 / (2·29) ≈ 2.6 px on every side.
    expect(lines[0]!.box.x0).toBeCloseTo(5 - 2.59, 1);
    expect(lines[0]!.box.y1).toBeCloseTo(8 + 2.59, 1);
    expect(lines[0]!.vertical).toBe(false);
  });

  it('finds every lettered line of a page with the PaddleOCR model, vertical Japanese as columns', async () => {
    const page = pages[1]!;
    const lines = await detectLines(await pixelsOf(page.png), page.width, page.height);
    for (const block of page.blocks)
      expect(
        lines.some(
          (l) =>
            iou(l.box, block.box) > 0.3 ||
            (l.box.x0 >= block.box.x0 - 8 &&
              l.box.x1 <= block.box.x1 + 8 &&
              l.box.y0 >= block.box.y0 - 8 &&
              l.box.y1 <= block.box.y1 + 8),
        ),
        JSON.stringify(block.box),
      ).toBe(true);
    expect(lines.filter((l) => l.vertical).length).toBeGreaterThanOrEqual(page.blocks.length);
  });
});

describe('blocks', () => {
  const line = (x0: number, y0: number, x1: number, y1: number) => ({
    box: { x0, y0, x1, y1 },
    score: 0.9,
    vertical: y1 - y0 > 1.5 * (x1 - x0),
  });
  it('joins the lines of a caption by orientation, alignment and spacing, and keeps a far one apart', () => {
    const blocks = groupBlocks(
      [line(10, 10, 110, 30), line(14, 34, 100, 54), line(10, 58, 60, 78), line(10, 300, 110, 320)],
      [],
      400,
      'horizontal',
    );
    expect(blocks.map((b) => b.lines.length).sort()).toEqual([1, 3]);
  });
  it('joins vertical columns side by side, with a lone glyph below a column, into one block', () => {
    const blocks = groupBlocks(
      [
        line(200, 10, 224, 150),
        line(172, 10, 196, 120),
        line(172, 124, 196, 146),
        line(20, 10, 44, 150),
      ],
      [],
      400,
      'vertical',
    );
    expect(blocks.map((b) => b.lines.length).sort()).toEqual([1, 3]);
    expect(blocks.every((b) => b.direction === 'vertical')).toBe(true);
  });
});

describe('the dbnet engine on a page', () => {
  it('finds each bubble as one block with all its lines, read in full', async () => {
    const page = pages[0]!;
    const { found } = await detectBlocks(
      await pixelsOf(page.png),
      page.width,
      page.height,
      'en',
      workers,
    );
    expect(found).toHaveLength(page.blocks.length);
    for (const truth of page.blocks) {
      const block = found.find((b) => iou(b.box, truth.box) >= 0.5);
      expect(block, JSON.stringify(truth)).toBeDefined();
      // First and last lines belong to the bubble's block.
      // Letters exact; word spaces are put back from the ink and may land inside a word.
      expect(block!.text.replace(/\s+/g, '')).toBe(truth.text.replace(/\s+/g, ''));
      expect(block!.bubble).not.toBeNull();
    }
  });

  it('reads vertical Japanese in its columns and erases nothing outside the lettering, art included', async () => {
    const page = pages[1]!;
    // Artwork outside the bubbles: a face-like shape and hatching.
    const rgba = await pixelsOf(page.png, (g) => {
      g.strokeStyle = '#222';
      g.lineWidth = 3;
      g.beginPath();
      g.arc(300, 420, 50, 0, Math.PI * 2);
      g.stroke();
      g.fillStyle = '#222';
      g.fillRect(280, 405, 8, 8);
      g.fillRect(312, 405, 8, 8);
      g.fillRect(288, 440, 24, 4);
      for (let x = 200; x < 400; x += 6) g.fillRect(x, 780, 2, 60);
    });
    const { found } = await detectBlocks(rgba, page.width, page.height, 'ja', workers);
    expect(found.every((b) => b.direction === 'vertical')).toBe(true);
    const read = found.map((b) => b.text).join('');
    for (const truth of page.blocks) expect(read).toContain(truth.text.slice(0, 3));
    const near = (x: number, y: number) =>
      page.blocks.some(
        (b) => x >= b.box.x0 - 10 && x < b.box.x1 + 10 && y >= b.box.y0 - 10 && y < b.box.y1 + 10,
      );
    let outside = 0;
    for (const b of found)
      for (let i = 0; i < b.ink.length; i++)
        if (b.ink[i] && !near(i % page.width, Math.floor(i / page.width))) outside++;
    expect(outside).toBe(0);
  });
});

describe('bubbles without an outline', () => {
  it('takes a white balloon on a painted panel as the bubble of its lines', async () => {
    const c = createCanvas(800, 600);
    const g = c.getContext('2d');
    g.fillStyle = '#6a9a6a';
    g.fillRect(0, 0, 800, 600);
    g.fillStyle = '#fff';
    g.beginPath();
    g.ellipse(400, 300, 170, 90, 0, 0, Math.PI * 2);
    g.fill();
    g.fillStyle = '#000';
    g.font = 'bold 30px "DejaVu Sans"';
    g.textAlign = 'center';
    g.fillText('WHERE ARE', 400, 290);
    g.fillText('WE GOING?', 400, 330);
    const { found } = await detectBlocks(
      g.getImageData(0, 0, 800, 600).data,
      800,
      600,
      'en',
      workers,
    );
    expect(found).toHaveLength(1);
    expect(found[0]!.bubble).not.toBeNull();
    expect(found[0]!.lines).toHaveLength(2);
    expect(found[0]!.text.replace(/\s+/g, '')).toBe('WHEREAREWEGOING?');
  });
});

describe('evidence before erasing', () => {
  const base = {
    text: 'HELLO THERE',
    confidence: 90,
    inkRatio: 0.25,
    lines: [{ x0: 0, y0: 0, x1: 100, y1: 20 }],
    bubble: null,
    direction: 'horizontal' as const,
  };
  const bubble = {
    area: new Uint8Array(0),
    ink: new Uint8Array(0),
    box: base.lines[0]!,
    inkBox: base.lines[0]!,
    inkPixels: 0,
  };
  it('keeps a confident, lettering-like block of a few lines', () => {
    expect(judge(base, 20)).toBeNull();
  });
  it('leaves alone a block read with low confidence, a sound effect, a lone glyph outside bubbles, a box of many lines and ink that is not lettering', () => {
    expect(judge({ ...base, confidence: 30 }, 20)).toBe('lowConfidence');
    expect(judge({ ...base, confidence: 30, lines: [{ x0: 0, y0: 0, x1: 300, y1: 80 }] }, 20)).toBe(
      'soundEffect',
    );
    expect(judge({ ...base, text: 'の' }, 20)).toBe('loneGlyph');
    expect(
      judge(
        {
          ...base,
          lines: Array.from({ length: 14 }, (_, i) => ({
            x0: 0,
            y0: i * 22,
            x1: 100,
            y1: i * 22 + 20,
          })),
        },
        20,
      ),
    ).toBe('tooLarge');
    expect(judge({ ...base, inkRatio: 0.8 }, 20)).toBe('notTextLike');
    expect(judge({ ...base, text: '…' }, 20)).toBe('notTextLike');
  });
  it('takes a lone glyph inside a bubble as lettering (a bubble may hold one word)', () => {
    expect(judge({ ...base, text: 'え', bubble }, 20)).toBeNull();
  });
});

describe('ink of a block', () => {
  /** A white 60×30 page with dark pixels at the given points. */
  function page(dark: Array<[number, number]>) {
    const width = 60;
    const rgba = new Uint8ClampedArray(width * 30 * 4).fill(255);
    for (const [x, y] of dark) rgba.fill(20, (y * width + x) * 4, (y * width + x) * 4 + 3);
    return { rgba, width, gray: luma(rgba, width * 30) };
  }
  const block = {
    box: { x0: 5, y0: 5, x1: 55, y1: 25 },
    lines: [{ x0: 5, y0: 5, x1: 55, y1: 25 }],
    direction: 'horizontal' as const,
    bubble: null,
    score: 0.9,
  };
  it('takes a stroke and a period as lettering but leaves a speck of the scan alone', () => {
    const stroke = Array.from({ length: 10 }, (_, i): [number, number] => [12, 10 + i]);
    const period: Array<[number, number]> = [
      [30, 18],
      [31, 18],
      [30, 19],
      [31, 19],
    ];
    const speck: Array<[number, number]> = [[45, 12]];
    const { rgba, width, gray } = page([...stroke, ...period, ...speck]);
    const { ink } = inkOf(rgba, gray, width, block);
    expect(ink[19 * width + 12]).toBe(1);
    expect(ink[19 * width + 31]).toBe(1);
    expect(ink[12 * width + 45]).toBe(0);
    expect(speck.length).toBeLessThan(MIN_INK_COMPONENT_PX);
  });
});

describe('learned line reading', () => {
  it('puts back a word space the model dropped, from the ink-free columns between two letters', () => {
    const chars = [
      { c: 'I', at: 1 },
      { c: 'T', at: 4 },
      { c: 'W', at: 10 },
      { c: 'A', at: 14 },
    ];
    // 8 px per step; ink everywhere except columns 50–65 (between T and W).
    const empty = (x: number) => x >= 50 && x < 66;
    expect(withSpaces(chars, 16, empty, 128)).toBe('IT WA');
    expect(withSpaces(chars, 16, () => false, 128)).toBe('ITWA');
  });
});
