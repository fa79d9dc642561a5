/**
 * Baseline (issue 18): the engine as it was before the scene engines were
 * rebuilt, kept unregistered so bench/engines.mjs can measure today's
 * engines beside the new ones in the same run. It lives out of src/ (issue 26),
 * its types stripped, and imports what it shares from dist/ (`npm run bench`
 * builds first).
 *
 * `tesseract`: finds text regions and reads them, offline on CPU
 * (tesseract.js 7, English data from the `@tesseract.js-data/eng` package;
 * `cacheMethod: 'none'` so nothing is fetched or written at run time).
 * Each paragraph becomes a text node whose transform is its box plus a small
 * margin; a page's previous text nodes are replaced, in one batch.
 */
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createWorker, OEM } from 'tesseract.js';
import { blobBytes, imageNode, asPng } from '../../dist/doors/scene/files/images.js';

/** Margin around a detected paragraph, so anti-aliased edges stay inside the region. */
export const REGION_MARGIN_PX = 4;
const MIN_CONFIDENCE = 30;

export function englishDataPath() {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
}

export function createTesseractEngine() {
  return {
    id: 'tesseract',
    name: 'Tesseract OCR (text detection and recognition, English)',
    needs: ['SourceImage'],
    produces: ['TextBoxes', 'OcrText'],
    async start() {
      const worker = await createWorker('eng', OEM.LSTM_ONLY, {
        langPath: englishDataPath(),
        gzip: true,
        cacheMethod: 'none',
      });
      return {
        async page({ page, blobs }) {
          const source = imageNode(page, 'source');
          if (!source) throw new Error(`page '${page.name}' has no source image`);
          const bytes = await asPng(await blobBytes(blobs, source.image.blob));
          const { data } = await worker.recognize(
            Buffer.from(bytes),
            {},
            { blocks: true, text: false },
          );
          const ops = page.nodes
            .filter((n) => 'text' in n.kind)
            .map((n) => ({ removeNode: { page: page.id, id: n.id } }));
          const lines = (data.blocks ?? [])
            .flatMap((b) => b.paragraphs.flatMap((p) => p.lines))
            .filter((l) => l.text.trim() && l.confidence >= MIN_CONFIDENCE);
          for (const region of regions(lines)) {
            const text = region.map((l) => l.text.trim()).join('\n');
            const box = union(region.map((l) => l.bbox));
            const heights = region.map((l) => l.bbox.y1 - l.bbox.y0).sort((a, b) => a - b);
            const confidence = region.reduce((sum, l) => sum + l.confidence, 0) / region.length;
            const x = Math.max(0, box.x0 - REGION_MARGIN_PX);
            const y = Math.max(0, box.y0 - REGION_MARGIN_PX);
            const node = {
              id: randomUUID(),
              transform: {
                x,
                y,
                width: Math.min(page.width, box.x1 + REGION_MARGIN_PX) - x,
                height: Math.min(page.height, box.y1 + REGION_MARGIN_PX) - y,
                rotationDeg: 0,
              },
              visible: true,
              kind: {
                text: {
                  text,
                  confidence: Math.round(confidence) / 100,
                  sourceLang: 'en',
                  direction: 'horizontal',
                  linePolygons: region.map(({ bbox: b }) => [
                    [b.x0, b.y0],
                    [b.x1, b.y0],
                    [b.x1, b.y1],
                    [b.x0, b.y1],
                  ]),
                  fontSizePx: Math.max(1, heights[Math.floor(heights.length / 2)]),
                },
              },
            };
            ops.push({ addNode: { page: page.id, node } });
          }
          return ops;
        },
        async close() {
          await worker.terminate();
        },
      };
    },
  };
}

/**
 * Text regions (speech bubbles): lines in reading order, a line joining the
 * region above it when the vertical gap is under one line height and their
 * horizontal extents overlap. Tesseract's own paragraphs span bubbles that
 * sit in one column, which would erase the art between them.
 */
export function regions(lines) {
  const sorted = [...lines].sort((a, b) => a.bbox.y0 - b.bbox.y0 || a.bbox.x0 - b.bbox.x0);
  const out = [];
  for (const line of sorted) {
    const b = line.bbox;
    const height = b.y1 - b.y0;
    const near = out.find(
      (r) => b.y0 - r.box.y1 < height && b.x0 < r.box.x1 && b.x1 > r.box.x0 && b.y0 >= r.box.y0,
    );
    if (near) {
      near.lines.push(line);
      near.box = union([near.box, b]);
    } else out.push({ lines: [line], box: b });
  }
  return out.map((r) => r.lines);
}

function union(boxes) {
  return boxes.reduce((a, b) => ({
    x0: Math.min(a.x0, b.x0),
    y0: Math.min(a.y0, b.y0),
    x1: Math.max(a.x1, b.x1),
    y1: Math.max(a.y1, b.y1),
  }));
}
