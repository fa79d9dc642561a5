/**
 * Pixel helpers for the scene engines: luminance planes, binary masks
 * (Uint8Array, 1 = set), flood fills, dilation, and masks as PNG blobs.
 */
import { createCanvas } from '@napi-rs/canvas';

export type Mask = Uint8Array;
export type Box = { x0: number; y0: number; x1: number; y1: number };

/** Rec. 601 luma of RGBA pixels (0–255), alpha composited on white. */
export function luma(rgba: Uint8ClampedArray | Uint8Array, count: number): Uint8Array {
  const out = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const a = rgba[i * 4 + 3]! / 255;
    const y = 0.299 * rgba[i * 4]! + 0.587 * rgba[i * 4 + 1]! + 0.114 * rgba[i * 4 + 2]!;
    out[i] = Math.round(y * a + 255 * (1 - a));
  }
  return out;
}

/**
 * 4-connected components of the pixels where `inside(i)` holds, from
 * `seed`. Returns the pixel indices; `seen` marks them.
 */
export function floodFill(
  width: number,
  height: number,
  seed: number,
  inside: (i: number) => boolean,
  seen: Uint8Array,
  limit = Infinity,
): number[] {
  const out: number[] = [];
  const stack = [seed];
  seen[seed] = 1;
  while (stack.length) {
    const i = stack.pop()!;
    out.push(i);
    if (out.length > limit) return out;
    const x = i % width;
    const y = (i - x) / width;
    const visit = (j: number) => {
      if (!seen[j] && inside(j)) {
        seen[j] = 1;
        stack.push(j);
      }
    };
    if (x > 0) visit(i - 1);
    if (x < width - 1) visit(i + 1);
    if (y > 0) visit(i - width);
    if (y < height - 1) visit(i + width);
  }
  return out;
}

export function boxOf(indices: number[], width: number): Box {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const i of indices) {
    const x = i % width;
    const y = (i - x) / width;
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return { x0, y0, x1: x1 + 1, y1: y1 + 1 };
}

/** Square dilation by `r` pixels (separable), optionally limited to `within`. */
export function dilate(mask: Mask, width: number, height: number, r: number, within?: Mask): Mask {
  if (r <= 0) return mask.slice();
  const rows = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++) {
    // Two sweeps: distance to the nearest set pixel left and right.
    let prev = -Infinity;
    for (let x = 0; x < width; x++) {
      if (mask[y * width + x]) prev = x;
      if (x - prev <= r) rows[y * width + x] = 1;
    }
    let next = Infinity;
    for (let x = width - 1; x >= 0; x--) {
      if (mask[y * width + x]) next = x;
      if (next - x <= r) rows[y * width + x] = 1;
    }
  }
  const out = new Uint8Array(mask.length);
  for (let x = 0; x < width; x++) {
    let prev = -Infinity;
    for (let y = 0; y < height; y++) {
      if (rows[y * width + x]) prev = y;
      if (y - prev <= r) out[y * width + x] = 1;
    }
    let next = Infinity;
    for (let y = height - 1; y >= 0; y--) {
      if (rows[y * width + x]) next = y;
      if (next - y <= r) out[y * width + x] = 1;
    }
  }
  if (within) for (let i = 0; i < out.length; i++) out[i] = out[i]! & within[i]!;
  return out;
}

/** Square erosion by `r` pixels (the complement's dilation). */
export function erode(mask: Mask, width: number, height: number, r: number): Mask {
  const inverse = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) inverse[i] = mask[i] ? 0 : 1;
  const grown = dilate(inverse, width, height, r);
  // The page edge counts as outside.
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const edge = x < r || y < r || x >= width - r || y >= height - r;
      out[i] = grown[i] || edge ? 0 : 1;
    }
  return out;
}

/** A mask as a PNG: white where set, black elsewhere. */
export async function maskPng(mask: Mask, width: number, height: number): Promise<Uint8Array> {
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(width, height);
  for (let i = 0; i < mask.length; i++) {
    const v = mask[i] ? 255 : 0;
    image.data[i * 4] = v;
    image.data[i * 4 + 1] = v;
    image.data[i * 4 + 2] = v;
    image.data[i * 4 + 3] = 255;
  }
  ctx.putImageData(image, 0, 0);
  return new Uint8Array(await canvas.encode('png'));
}

/** A mask from a PNG (set where the luma is over half), scaled to width × height. */
export function maskFrom(rgba: Uint8ClampedArray, count: number): Mask {
  const out = new Uint8Array(count);
  for (let i = 0; i < count; i++) out[i] = rgba[i * 4]! > 127 ? 1 : 0;
  return out;
}
