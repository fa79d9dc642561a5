/**
 * Scene engines quality benchmark (issue 18): generated manga-like pages
 * with known ground truth (bench/engines-pages.mjs) go through OCR → a
 * fixed translation → fill → render, once with today's engines (kept in
 * bench/engines-baseline/) and once with the new ones, in the same
 * run. Reported per engine set:
 * - detection precision/recall at IoU ≥ 0.5 (text node boxes vs ink boxes);
 * - OCR character error rate per language and direction (edit distance over
 *   ground-truth length; a text block nobody detected counts as all wrong);
 * - inpainting: mean absolute difference against the clean artwork inside
 *   the text mask, and the share of pixels changed outside the (3 px dilated)
 *   text mask, per background;
 * - render overflow: pixels the renderer changed outside the bubbles (and
 *   outside caption boxes);
 * - milliseconds per page for each step.
 *
 * `node bench/engines.mjs` after `npm run build`, or the `engines` part of
 * `npm run bench` (`npm run bench -- engines`, or BENCH_PARTS=engines).
 * Env: BENCH_ENGINE_PAGES (30), BENCH_ENGINE_IMAGES (a folder: before/after
 * PNGs of three pages, source, inpainted and rendered, are written there).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { applyOp } from '../dist/doors/scene/model/reducer.js';
import { blobHash } from '../dist/kernel/blob-hash.js';
import { createTesseractEngine } from '../dist/doors/scene/engines/tesseract.js';
import { createFillEngine } from '../dist/doors/scene/engines/fill.js';
import { createRendererEngine } from '../dist/doors/scene/engines/renderer.js';
import { createTesseractEngine as baselineTesseract } from './engines-baseline/tesseract.mjs';
import { createFillEngine as baselineFill } from './engines-baseline/fill.mjs';
import { createRendererEngine as baselineRenderer } from './engines-baseline/renderer.mjs';
import { fontsPresent, generatePage } from './engines-pages.mjs';

const PAGES = Number.parseInt(process.env.BENCH_ENGINE_PAGES ?? '', 10) || 30;
/** Pages whose images BENCH_ENGINE_IMAGES receives: ja flat, ja gradient, en screentone. */
const EXPORTED = [1, 3, 4];
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

const TRANSLATIONS = {
  // ja pages are translated to English (horizontal), en pages to Japanese (vertical).
  ja: ['WHERE ARE YOU GOING?', 'THANK YOU SO MUCH', 'IT IS NOT OVER YET', 'I AM FINE', 'REALLY?'],
  en: ['どこへ行くの', 'ありがとう', 'まだ終わってない', '大丈夫だよ', '本当に'],
};

export function memoryBlobs() {
  const m = new Map();
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

async function rgbaOf(bytes) {
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(img.width, img.height);
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  return g.getImageData(0, 0, img.width, img.height).data;
}

function iou(a, b) {
  const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  const area = (r) => (r.x1 - r.x0) * (r.y1 - r.y0);
  return inter / (area(a) + area(b) - inter);
}

export function editDistance(a, b) {
  const s = [...a];
  const t = [...b];
  let prev = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const cur = [i];
    for (let j = 1; j <= t.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (s[i - 1] === t[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[t.length];
}

const normalise = (text, lang) =>
  lang === 'en' ? text.toUpperCase().replace(/\s+/g, ' ').trim() : text.replace(/\s+/g, '');

function dilateMask(mask, w, h, r) {
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      if (!mask[y * w + x]) continue;
      for (let dy = -r; dy <= r; dy++)
        for (let dx = -r; dx <= r; dx++) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx >= 0 && yy >= 0 && xx < w && yy < h) out[yy * w + xx] = 1;
        }
    }
  return out;
}

/** Bubble interiors and caption boxes: where rendered text may go. */
function allowedArea(page) {
  const c = createCanvas(page.width, page.height);
  const g = c.getContext('2d');
  g.fillStyle = '#fff';
  for (const b of page.blocks) {
    if (b.polygon) {
      g.beginPath();
      b.polygon.forEach(([x, y], i) => (i ? g.lineTo(x, y) : g.moveTo(x, y)));
      g.closePath();
      g.fill();
    } else
      g.fillRect(b.box.x0 - 6, b.box.y0 - 6, b.box.x1 - b.box.x0 + 12, b.box.y1 - b.box.y0 + 12);
  }
  const d = g.getImageData(0, 0, page.width, page.height).data;
  const out = new Uint8Array(page.width * page.height);
  for (let i = 0; i < out.length; i++) out[i] = d[i * 4 + 3] > 0 ? 1 : 0;
  return out;
}

const imageOfRole = (page, role) =>
  page.nodes.find((n) => 'image' in n.kind && n.kind.image.role === role)?.kind.image;

function applyAll(scene, ops) {
  for (const op of ops) scene = applyOp(scene, op).state;
  return scene;
}

/** One engine set over all pages; returns per-page measurements. */
async function runSet(name, engines, generated, imagesDir) {
  const runs = new Map();
  const startOcr = async (lang) => {
    const key = name === 'today' ? 'en' : lang;
    if (!runs.has(key)) runs.set(key, await engines.tesseract.start({ sourceLanguage: lang }));
    return runs.get(key);
  };
  const fill = await engines.fill.start({});
  const renderer = await engines.renderer.start({});
  const out = [];
  const signal = new AbortController().signal;
  for (const page of generated) {
    const blobs = memoryBlobs();
    const hash = await blobs.put(page.png);
    const pageId = randomUUID();
    let scene = {
      project: { name: 'bench', createdAt: '', updatedAt: '', style: {} },
      pages: [
        {
          id: pageId,
          name: `page ${page.index}`,
          width: page.width,
          height: page.height,
          nodes: [
            {
              id: randomUUID(),
              transform: { x: 0, y: 0, width: page.width, height: page.height, rotationDeg: 0 },
              visible: true,
              kind: {
                image: {
                  role: 'source',
                  blob: hash,
                  opacity: 1,
                  naturalWidth: page.width,
                  naturalHeight: page.height,
                },
              },
            },
          ],
        },
      ],
    };
    const current = () => scene.pages[0];
    const step = async (run) => {
      const t = process.hrtime.bigint();
      const ops = await run.page({ page: current(), pageIndex: 0, blobs, signal });
      const ms = Number(process.hrtime.bigint() - t) / 1e6;
      scene = applyAll(scene, ops);
      return ms;
    };
    const ocrMs = await step(await startOcr(page.lang));
    const nodes = current().nodes.filter((n) => 'text' in n.kind);
    // A fixed translation per node, in the other language.
    const list = TRANSLATIONS[page.lang];
    scene = applyAll(
      scene,
      nodes.map((n, i) => ({
        updateNode: {
          page: pageId,
          id: n.id,
          patch: { data: { text: { translation: list[i % list.length] } } },
        },
      })),
    );
    const fillMs = await step(fill);
    const renderMs = await step(renderer);
    const inpainted = await blobs.get(imageOfRole(current(), 'inpainted').blob);
    const rendered = await blobs.get(imageOfRole(current(), 'rendered').blob);
    out.push({
      page,
      ocrMs,
      fillMs,
      renderMs,
      boxes: nodes.map((n) => ({
        box: {
          x0: n.transform.x,
          y0: n.transform.y,
          x1: n.transform.x + n.transform.width,
          y1: n.transform.y + n.transform.height,
        },
        text: n.kind.text.text ?? '',
      })),
      inpainted: await rgbaOf(inpainted),
      rendered: await rgbaOf(rendered),
    });
    if (imagesDir && EXPORTED.includes(page.index)) {
      writeFileSync(join(imagesDir, `page${page.index}-${name}-inpainted.png`), inpainted);
      writeFileSync(join(imagesDir, `page${page.index}-${name}-rendered.png`), rendered);
    }
  }
  for (const run of runs.values()) await run.close?.();
  return out;
}

async function measure(results) {
  const det = { tp: 0, preds: 0, gt: 0 };
  const cer = {};
  const inpaint = {};
  let overflow = 0;
  const ms = { ocr: 0, fill: 0, render: 0 };
  for (const r of results) {
    const { page } = r;
    const w = page.width;
    const h = page.height;
    ms.ocr += r.ocrMs;
    ms.fill += r.fillMs;
    ms.render += r.renderMs;
    // Detection: greedy one-to-one matching by IoU.
    const pairs = [];
    page.blocks.forEach((g, gi) =>
      r.boxes.forEach((p, pi) => {
        const v = iou(g.box, p.box);
        if (v >= 0.5) pairs.push({ gi, pi, v });
      }),
    );
    pairs.sort((a, b) => b.v - a.v);
    const gUsed = new Map();
    const pUsed = new Set();
    for (const { gi, pi } of pairs)
      if (!gUsed.has(gi) && !pUsed.has(pi)) {
        gUsed.set(gi, pi);
        pUsed.add(pi);
      }
    det.tp += gUsed.size;
    det.preds += r.boxes.length;
    det.gt += page.blocks.length;
    page.blocks.forEach((g, gi) => {
      const key = `${g.lang} ${g.direction}`;
      cer[key] ??= { edits: 0, chars: 0 };
      const truth = normalise(g.text, g.lang);
      const pi = gUsed.get(gi);
      const read = pi === undefined ? '' : normalise(r.boxes[pi].text, g.lang);
      cer[key].edits += editDistance(read, truth);
      cer[key].chars += [...truth].length;
    });
    // Inpainting against the clean artwork.
    const source = await rgbaOf(page.png);
    const clean = await rgbaOf(page.cleanPng);
    const inside = dilateMask(page.textMask, w, h, 1);
    const near = dilateMask(page.textMask, w, h, 3);
    let diff = 0;
    let n = 0;
    let changedOutside = 0;
    for (let i = 0; i < w * h; i++) {
      const o = i * 4;
      if (inside[i]) {
        diff +=
          (Math.abs(r.inpainted[o] - clean[o]) +
            Math.abs(r.inpainted[o + 1] - clean[o + 1]) +
            Math.abs(r.inpainted[o + 2] - clean[o + 2])) /
          3;
        n++;
      }
      if (
        !near[i] &&
        (r.inpainted[o] !== source[o] ||
          r.inpainted[o + 1] !== source[o + 1] ||
          r.inpainted[o + 2] !== source[o + 2])
      )
        changedOutside++;
    }
    inpaint[page.background] ??= { diff: 0, n: 0, changedOutside: 0, pixels: 0 };
    inpaint[page.background].diff += diff;
    inpaint[page.background].n += n;
    inpaint[page.background].changedOutside += changedOutside;
    inpaint[page.background].pixels += w * h;
    // Render overflow: pixels the renderer changed outside bubbles and caption boxes.
    const allowed = allowedArea(page);
    for (let i = 0; i < w * h; i++) {
      const o = i * 4;
      if (
        !allowed[i] &&
        (r.rendered[o] !== r.inpainted[o] ||
          r.rendered[o + 1] !== r.inpainted[o + 1] ||
          r.rendered[o + 2] !== r.inpainted[o + 2])
      )
        overflow++;
    }
  }
  const pages = results.length;
  return {
    detection: {
      precision: round(det.preds ? det.tp / det.preds : 0),
      recall: round(det.gt ? det.tp / det.gt : 0),
      detected: det.preds,
      truth: det.gt,
    },
    cer: Object.fromEntries(Object.entries(cer).map(([k, v]) => [k, round(v.edits / v.chars)])),
    inpaint: Object.fromEntries(
      Object.entries(inpaint).map(([k, v]) => [
        k,
        {
          maeInMask: round(v.diff / v.n, 2),
          changedOutsideShare: round(v.changedOutside / v.pixels, 5),
        },
      ]),
    ),
    renderOverflowPx: overflow,
    msPerPage: {
      ocr: Math.round(ms.ocr / pages),
      fill: Math.round(ms.fill / pages),
      render: Math.round(ms.render / pages),
      pipeline: Math.round((ms.ocr + ms.fill + ms.render) / pages),
    },
  };
}

export async function benchEngines({
  pages = PAGES,
  imagesDir = process.env.BENCH_ENGINE_IMAGES,
} = {}) {
  const fonts = fontsPresent();
  if (!fonts.latin || !fonts.cjk)
    throw new Error(
      `the engines bench needs DejaVu Sans and Noto Sans CJK JP (apt-get install fonts-dejavu-core fonts-noto-cjk); present: ${JSON.stringify(fonts)}`,
    );
  if (imagesDir) mkdirSync(imagesDir, { recursive: true });
  const generated = [];
  for (let i = 0; i < pages; i++) generated.push(await generatePage(i));
  if (imagesDir)
    for (const p of generated.filter((g) => EXPORTED.includes(g.index)))
      writeFileSync(join(imagesDir, `page${p.index}-source.png`), p.png);
  const today = await measure(
    await runSet(
      'today',
      { tesseract: baselineTesseract(), fill: baselineFill(), renderer: baselineRenderer() },
      generated,
      imagesDir,
    ),
  );
  const next = await measure(
    await runSet(
      'new',
      {
        tesseract: createTesseractEngine(),
        fill: createFillEngine(),
        renderer: createRendererEngine(),
      },
      generated,
      imagesDir,
    ),
  );
  return { pages, today, new: next };
}

export function printEngines(result, table) {
  const { today, new: next } = result;
  const rows = [
    ['detection precision (IoU ≥ 0.5)', today.detection.precision, next.detection.precision],
    ['detection recall (IoU ≥ 0.5)', today.detection.recall, next.detection.recall],
    [
      'regions detected / truth',
      `${today.detection.detected}/${today.detection.truth}`,
      `${next.detection.detected}/${next.detection.truth}`,
    ],
    ...Object.keys(next.cer).map((k) => [`OCR CER ${k}`, today.cer[k], next.cer[k]]),
    ...Object.keys(next.inpaint).flatMap((k) => [
      [`inpaint MAE in text mask, ${k}`, today.inpaint[k].maeInMask, next.inpaint[k].maeInMask],
      [
        `inpaint pixels changed outside mask, ${k}`,
        today.inpaint[k].changedOutsideShare,
        next.inpaint[k].changedOutsideShare,
      ],
    ]),
    ['render overflow px (all pages)', today.renderOverflowPx, next.renderOverflowPx],
    ...Object.keys(next.msPerPage).map((k) => [
      `ms per page: ${k}`,
      today.msPerPage[k],
      next.msPerPage[k],
    ]),
  ];
  console.log(
    `scene engines, ${result.pages} generated pages (today's engines vs the new ones, same run)\n`,
  );
  console.log(table(['measure', 'today', 'new'], rows));
  console.log('');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const simpleTable = (head, rows) =>
    [head, ...rows].map((r) => r.map((c) => String(c)).join(' | ')).join('\n');
  const result = await benchEngines();
  printEngines(result, simpleTable);
}
