/**
 * Scene engines on real pages (issue 32 item 7): the pages committed under
 * test/fixtures/real-pages/ (licences in SOURCES.md) with hand-made truth
 * (truth.json: per page, text blocks with a box, the text and a kind —
 * dialogue, caption, title, nametag or sfx) go through detection (`dbnet`,
 * or BENCH_REAL_DETECTOR=tesseract for the fallback), a fixed translation,
 * fill and render, in process. Printed per page:
 * - blocks found / true: a true block is found when a text node overlaps
 *   it by half of the smaller box (per kind: dialogue, and captions, titles
 *   and name tags together; sound effects are not expected);
 * - false boxes: text nodes that overlap no true block;
 * - CER on found blocks (edit distance over the truth's length, spaces
 *   collapsed, English upper-cased);
 * - pixels the fill changed outside the true blocks (each grown by 4 px);
 * - seconds per page (detection + OCR + fill + render) and the process's
 *   peak RSS.
 *
 * `npm run bench -- engines-real` (builds first), or `node
 * bench/engines-real.mjs` after `npm run build`. BENCH_REAL_IMAGES=<dir>
 * writes each page's inpainted and rendered PNGs there; BENCH_REAL_SCALE=1.4
 * scales every page (and its truth) first, e.g. to time 2 MP pages.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { applyOp } from '../dist/doors/scene/model/reducer.js';
import { emptyScene } from '../dist/doors/scene/model/model.js';
import { createDbnetEngine } from '../dist/doors/scene/engines/dbnet.js';
import { createTesseractEngine } from '../dist/doors/scene/engines/tesseract.js';
import { createFillEngine } from '../dist/doors/scene/engines/fill.js';
import { createRendererEngine } from '../dist/doors/scene/engines/renderer.js';
import { editDistance, memoryBlobs } from './engines.mjs';

const DIR = join(import.meta.dirname, '..', 'test', 'fixtures', 'real-pages');
/** Kinds of block a detector must find; `sfx` and `partial` (cut by the page edge) may be erased, not expected. */
const EXPECTED = new Set(['dialogue', 'caption', 'title', 'nametag']);
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
const TRANSLATION = { en: 'ここに訳文', ja: 'THE TRANSLATION', zh: 'THE TRANSLATION' };

const boxOf = ([x0, y0, x1, y1]) => ({ x0, y0, x1, y1 });
function overlap(a, b) {
  const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const area = (r) => (r.x1 - r.x0) * (r.y1 - r.y0);
  return (w * h) / Math.min(area(a), area(b));
}
const normalise = (text, lang) =>
  lang === 'en' ? text.toUpperCase().replace(/\s+/g, ' ').trim() : text.replace(/\s+/g, '');

const SCALE = Number(process.env.BENCH_REAL_SCALE) || 1;
/** BENCH_REAL_VERBOSE=1 prints each found block the OCR misread, truth above what was read. */
const VERBOSE = process.env.BENCH_REAL_VERBOSE === '1';

/** The page's bytes as the bench uses them: as committed, or scaled by SCALE (PNG). */
async function scaled(bytes) {
  if (SCALE === 1) return bytes;
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(Math.round(img.width * SCALE), Math.round(img.height * SCALE));
  c.getContext('2d').drawImage(img, 0, 0, c.width, c.height);
  return c.encode('png');
}

async function pixels(bytes) {
  const img = await loadImage(Buffer.from(bytes));
  const c = createCanvas(img.width, img.height);
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  return { data: g.getImageData(0, 0, img.width, img.height).data, w: img.width, h: img.height };
}

const apply = (scene, ops) => applyOp(scene, { batch: { label: 'step', ops } }).state;
const imageOf = (page, role) =>
  page.nodes.find((n) => 'image' in n.kind && n.kind.image.role === role)?.kind.image;

export async function benchEnginesReal() {
  const truth = JSON.parse(readFileSync(join(DIR, 'truth.json'), 'utf8'));
  const detector =
    process.env.BENCH_REAL_DETECTOR === 'tesseract' ? createTesseractEngine() : createDbnetEngine();
  const imagesDir = process.env.BENCH_REAL_IMAGES;
  if (imagesDir) mkdirSync(imagesDir, { recursive: true });
  const rows = [];
  const runs = new Map();
  const fill = await createFillEngine().start({});
  const render = await createRendererEngine().start({});
  for (const entry of truth.pages) {
    const bytes = await scaled(readFileSync(join(DIR, entry.file)));
    const { data: source, w, h } = await pixels(bytes);
    const blobs = memoryBlobs();
    const blob = await blobs.put(new Uint8Array(bytes));
    const page = {
      id: randomUUID(),
      name: entry.file,
      width: w,
      height: h,
      nodes: [
        {
          id: randomUUID(),
          transform: { x: 0, y: 0, width: w, height: h, rotationDeg: 0 },
          visible: true,
          kind: {
            image: { role: 'source', blob, opacity: 1, naturalWidth: w, naturalHeight: h },
          },
        },
      ],
    };
    let scene = applyOp(emptyScene('bench', 'now'), { addPage: { page } }).state;
    if (!runs.has(entry.lang))
      runs.set(entry.lang, await detector.start({ sourceLanguage: entry.lang }));
    const input = () => ({
      page: scene.pages[0],
      pageIndex: 0,
      blobs,
      signal: new AbortController().signal,
      skipped: () => {},
    });
    const started = performance.now();
    scene = apply(scene, await runs.get(entry.lang).page(input()));
    const translated = scene.pages[0].nodes.flatMap((n) =>
      'text' in n.kind
        ? [
            {
              updateNode: {
                page: page.id,
                id: n.id,
                patch: { data: { text: { translation: TRANSLATION[entry.lang] ?? 'TEXT' } } },
              },
            },
          ]
        : [],
    );
    if (translated.length) scene = apply(scene, translated);
    scene = apply(scene, await fill.page(input()));
    scene = apply(scene, await render.page(input()));
    const seconds = (performance.now() - started) / 1000;
    const out = scene.pages[0];
    const nodes = out.nodes.flatMap((n) =>
      'text' in n.kind
        ? [
            {
              box: {
                x0: n.transform.x,
                y0: n.transform.y,
                x1: n.transform.x + n.transform.width,
                y1: n.transform.y + n.transform.height,
              },
              text: n.kind.text.text ?? '',
            },
          ]
        : [],
    );
    const blocks = entry.blocks.map((b) => ({
      ...b,
      box: boxOf(b.box.map((v) => Math.round(v * SCALE))),
    }));
    const expected = blocks.filter((b) => EXPECTED.has(b.kind));
    const found = expected.filter((b) => nodes.some((n) => overlap(n.box, b.box) >= 0.5));
    const falseBoxes = nodes.filter((n) => !blocks.some((b) => overlap(n.box, b.box) >= 0.5));
    let errors = 0;
    let chars = 0;
    for (const b of found) {
      const read = nodes
        .filter((n) => overlap(n.box, b.box) >= 0.5)
        .map((n) => n.text)
        .join(entry.lang === 'en' ? ' ' : '');
      const t = normalise(b.text, entry.lang);
      const distance = editDistance(normalise(read, entry.lang), t);
      errors += distance;
      if (VERBOSE && distance > 0)
        console.log(
          `  ${entry.file} [${distance}] truth: ${t}\n${' '.repeat(entry.file.length + 6)}read: ${normalise(read, entry.lang)}`,
        );
      chars += [...t].length;
    }
    // Pixels the fill changed outside the true text blocks (grown by 4 px).
    const inpainted = await pixels(await blobs.get(imageOf(out, 'inpainted').blob));
    const allowed = new Uint8Array(w * h);
    for (const b of blocks)
      for (let y = Math.max(0, b.box.y0 - 4); y < Math.min(h, b.box.y1 + 4); y++)
        for (let x = Math.max(0, b.box.x0 - 4); x < Math.min(w, b.box.x1 + 4); x++)
          allowed[y * w + x] = 1;
    let outside = 0;
    const where = { x0: w, y0: h, x1: -1, y1: -1 };
    for (let i = 0; i < w * h; i++) {
      if (allowed[i]) continue;
      const o = i * 4;
      if (
        inpainted.data[o] !== source[o] ||
        inpainted.data[o + 1] !== source[o + 1] ||
        inpainted.data[o + 2] !== source[o + 2]
      ) {
        outside++;
        const [x, y] = [i % w, Math.floor(i / w)];
        Object.assign(where, {
          x0: Math.min(where.x0, x),
          y0: Math.min(where.y0, y),
          x1: Math.max(where.x1, x),
          y1: Math.max(where.y1, y),
        });
      }
    }
    if (VERBOSE && outside > 0)
      console.log(
        `  ${entry.file}: ${outside} pixels changed outside the truth, within ${JSON.stringify(where)}`,
      );
    if (imagesDir)
      for (const role of ['inpainted', 'rendered'])
        writeFileSync(
          join(imagesDir, `${entry.file.replace(/\.\w+$/, '')}-${role}.png`),
          await blobs.get(imageOf(out, role).blob),
        );
    const dialogue = expected.filter((b) => b.kind === 'dialogue');
    const other = expected.filter((b) => b.kind !== 'dialogue');
    rows.push({
      page: entry.file,
      lang: entry.lang,
      megapixels: round((w * h) / 1e6, 2),
      found: found.length,
      true: expected.length,
      dialogueFound: dialogue.filter((b) => found.includes(b)).length,
      dialogue: dialogue.length,
      otherFound: other.filter((b) => found.includes(b)).length,
      other: other.length,
      nodes: nodes.length,
      falseBoxes: falseBoxes.length,
      cer: chars ? round(errors / chars) : null,
      errors,
      chars,
      changedOutside: outside,
      seconds: round(seconds, 2),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    });
  }
  for (const run of runs.values()) await run.close?.();
  const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
  const byLang = {};
  for (const r of rows) {
    byLang[r.lang] ??= { errors: 0, chars: 0 };
    byLang[r.lang].errors += r.errors;
    byLang[r.lang].chars += r.chars;
  }
  return {
    rows,
    totals: {
      dialogueRecall: round(sum('dialogueFound') / Math.max(1, sum('dialogue'))),
      otherRecall: round(sum('otherFound') / Math.max(1, sum('other'))),
      precision: round((sum('nodes') - sum('falseBoxes')) / Math.max(1, sum('nodes'))),
      cer: Object.fromEntries(
        Object.entries(byLang).map(([l, v]) => [l, round(v.errors / Math.max(1, v.chars))]),
      ),
      changedOutside: sum('changedOutside'),
      secondsPerPage: round(sum('seconds') / rows.length, 2),
      peakRssMb: Math.max(...rows.map((r) => r.peakRssMb)),
    },
  };
}

export function printEnginesReal(result, table) {
  console.log('\nScene engines on real pages (test/fixtures/real-pages)');
  table(
    [
      'page',
      'lang',
      'MP',
      'found/true',
      'false boxes',
      'CER',
      'px changed outside',
      's/page',
      'peak RSS MB',
    ],
    result.rows.map((r) => [
      r.page,
      r.lang,
      r.megapixels,
      `${r.found}/${r.true}`,
      r.falseBoxes,
      r.cer ?? '-',
      r.changedOutside,
      r.seconds,
      r.peakRssMb,
    ]),
  );
  console.log(JSON.stringify(result.totals));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchEnginesReal();
  printEnginesReal(result, (headers, rows) => {
    console.log(headers.join(' | '));
    for (const row of rows) console.log(row.join(' | '));
  });
}
