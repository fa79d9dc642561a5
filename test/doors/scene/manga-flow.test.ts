/**
 * A vertical Japanese manga page end to end (issue 18), over MCP and REST:
 * start_pipeline {sourceLanguage: 'ja'} runs tesseract (bubble segmentation,
 * jpn_vert) → llm (a loopback stub) → fill (inpainting the text mask) →
 * renderer (inside the bubbles). The page comes from the benchmark's
 * generator: a gradient background, three bubbles and a caption on the art.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { fontsPresent, generatePage, type GeneratedPage } from '../../../bench/engines-pages.mjs';
import type { Scene } from '../../../src/doors/scene/model/model.js';
import { json, sceneServer, sse, until, uploadPages, type SceneServer } from './server.js';
import { structuredOf } from '../../helpers/results.js';

let s: SceneServer;
let page: GeneratedPage;
beforeAll(async () => {
  const fonts = fontsPresent();
  if (!fonts.cjk)
    throw new Error(
      'Noto Sans CJK JP is not installed, so no Japanese page can be drawn: apt-get install fonts-noto-cjk',
    );
  s = await sceneServer();
  page = await generatePage(3); // ja, gradient
});
afterAll(async () => {
  await s?.close();
});

async function rgba(bytes: Uint8Array) {
  const image = await loadImage(Buffer.from(bytes));
  const canvas = createCanvas(image.width, image.height);
  const g = canvas.getContext('2d');
  g.drawImage(image, 0, 0);
  return g.getImageData(0, 0, image.width, image.height).data;
}

function editDistance(a: string, b: string): number {
  const s1 = [...a];
  const s2 = [...b];
  let prev = Array.from({ length: s2.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s1.length; i++) {
    const cur = [i];
    for (let j = 1; j <= s2.length; j++)
      cur[j] = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (s1[i - 1] === s2[j - 1] ? 0 : 1),
      );
    prev = cur;
  }
  return prev[s2.length]!;
}

/** Where rendered text may go: bubble interiors and caption boxes (6 px margin). */
function allowed(p: GeneratedPage): Uint8Array {
  const c = createCanvas(p.width, p.height);
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  for (const b of p.blocks) {
    if (b.polygon) {
      g.beginPath();
      b.polygon.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
      g.closePath();
      g.fill();
    } else
      g.fillRect(b.box.x0 - 6, b.box.y0 - 6, b.box.x1 - b.box.x0 + 12, b.box.y1 - b.box.y0 + 12);
  }
  const d = g.getImageData(0, 0, p.width, p.height).data;
  return Uint8Array.from({ length: p.width * p.height }, (_, i) => (d[i * 4 + 3]! > 0 ? 1 : 0));
}

describe('a vertical Japanese page through the pipeline', () => {
  it('reads the bubbles right to left, translates, inpaints only the letters and renders inside the bubbles', async () => {
    const client = await s.mcp();
    await client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'manga.khrproj', createName: 'Manga' },
    });
    expect((await uploadPages(s, [{ name: 'ja.png', bytes: page.png }])).status).toBe(201);
    const events = sse(s);
    await events.ready();
    const started = await client.callTool({
      name: 'koharu.start_pipeline',
      arguments: {
        steps: ['tesseract', 'llm', 'fill', 'renderer'],
        sourceLanguage: 'ja',
        targetLanguage: 'English',
      },
    });
    const { jobId } = structuredOf(started) as { jobId: string };
    await until(
      () => events.events.some((e) => e.event === 'jobFinished' && e.id === jobId),
      120_000,
    );
    events.stop();
    expect(events.events.find((e) => e.event === 'jobFinished' && e.id === jobId)).toMatchObject({
      status: 'completed',
    });

    const { scene } = (await json(await s.fetch(`${s.base}/api/v1/scene.json`))) as {
      scene: Scene;
    };
    const nodes = scene.pages[0]!.nodes;
    const texts = nodes.flatMap((n) => ('text' in n.kind ? [{ node: n, text: n.kind.text }] : []));
    // Every block found, read vertically in Japanese, in manga order (the generator's order).
    expect(texts.map((t) => t.text.direction)).toEqual(page.blocks.map(() => 'vertical'));
    expect(texts.every((t) => t.text.sourceLang === 'ja')).toBe(true);
    const truth = page.blocks.map((b) => b.text);
    const read = texts.map((t) => t.text.text ?? '');
    const errors = truth.reduce((sum, t, i) => sum + editDistance(read[i] ?? '', t), 0);
    const chars = truth.reduce((sum, t) => sum + [...t].length, 0);
    expect(
      errors / chars,
      `read ${JSON.stringify(read)} for ${JSON.stringify(truth)}`,
    ).toBeLessThanOrEqual(0.2);
    // The stub translated each segment, numbered in reading order.
    expect(s.llm.requests.at(-1)!.system).toContain('from Japanese into English');
    expect(s.llm.requests.at(-1)!.user.split('\n')).toHaveLength(truth.length);
    expect(texts.every((t) => t.text.translation?.endsWith('[pt]'))).toBe(true);
    // The text and bubble masks the fill and the renderer used are in the scene.
    const masks = nodes.flatMap((n) => ('mask' in n.kind ? [n.kind.mask.role] : []));
    expect(masks.sort()).toEqual(['bubble', 'segment']);

    const blob = async (role: string) => {
      const n = nodes.find((x) => 'image' in x.kind && x.kind.image.role === role)!;
      const hash = 'image' in n.kind ? n.kind.image.blob : '';
      return rgba(
        new Uint8Array(await (await s.fetch(`${s.base}/api/v1/blobs/${hash}`)).arrayBuffer()),
      );
    };
    const source = await rgba(page.png);
    const clean = await rgba(page.cleanPng);
    const inpainted = await blob('inpainted');
    const rendered = await blob('rendered');
    const { width, height } = page;
    const area = allowed(page);
    let inMask = 0;
    let diff = 0;
    let changedFarFromText = 0;
    let renderedOutside = 0;
    let renderedInside = 0;
    for (let i = 0; i < width * height; i++) {
      const o = i * 4;
      if (page.textMask[i]) {
        diff += Math.abs(inpainted[o]! - clean[o]!);
        inMask++;
      }
      const x = i % width;
      const y = (i - x) / width;
      let nearText = false;
      for (let dy = -3; dy <= 3 && !nearText; dy++)
        for (let dx = -3; dx <= 3 && !nearText; dx++)
          nearText = !!page.textMask[(y + dy) * width + x + dx];
      if (!nearText && inpainted[o] !== source[o]) changedFarFromText++;
      if (rendered[o] !== inpainted[o] || rendered[o + 1] !== inpainted[o + 1]) {
        if (area[i]) renderedInside++;
        else renderedOutside++;
      }
    }
    // The letters are gone (black on a 120–235 gradient: an error of ~150 before).
    expect(diff / inMask).toBeLessThan(10);
    expect(changedFarFromText).toBe(0);
    expect(renderedOutside).toBe(0);
    expect(renderedInside).toBeGreaterThan(500);
  });
});
