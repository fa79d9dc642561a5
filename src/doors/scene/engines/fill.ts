/**
 * `fill`: erases the text of each text region by inpainting only its text
 * pixels (inpaint.ts), so screentone and gradients around and under the
 * letters survive, and writes the page's inpainted image. The text pixels
 * are the page's `segment` mask (written by the tesseract engine) inside the
 * regions' boxes; a region the mask does not cover (drawn or imported by
 * hand) gets its pixels that stand out from the colour around its box.
 * Pixels outside the mask are left untouched.
 *
 * No erasing without evidence (issue 32 item 3): a node an engine read (it
 * has a confidence) is erased only from the mask's pixels in its box, when
 * its confidence reaches MIN_CONFIDENCE, it has at most MAX_LINES lines,
 * and — once the page holds translations — it has one and is more than a
 * lone glyph. Every node left alone is said with its reason (`skipped`).
 */
import { createCanvas } from '@napi-rs/canvas';
import { blobBytes, canvasOf, imageNode, png } from '../files/images.js';
import type { Engine, SkipReason } from './registry.js';
import { inpaint } from './inpaint.js';
import { dilate, luma, maskFrom, type Mask } from './pixels.js';
import { maskNode, pixelRect, putImageOps, textNodes } from './raster.js';
import type { TextData } from '../model/model.js';

const RING_PX = 3;
/** Confidence (0–1) a read node needs to be erased. */
export const MIN_CONFIDENCE = 0.4;
/** More lines than this is not one block of lettering. */
export const MAX_LINES = 10;
/** Luma difference from the surrounding colour that marks a pixel as text. */
const STANDS_OUT = 48;

export function ringColour(
  data: Uint8ClampedArray,
  width: number,
  height: number,
  r: { x0: number; y0: number; x1: number; y1: number },
): [number, number, number, number] {
  const channels: number[][] = [[], [], [], []];
  const take = (x: number, y: number) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    if (x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1) return;
    const i = (y * width + x) * 4;
    for (let c = 0; c < 4; c++) channels[c]!.push(data[i + c]!);
  };
  for (let d = 1; d <= RING_PX; d++) {
    for (let x = r.x0 - d; x < r.x1 + d; x++) {
      take(x, r.y0 - d);
      take(x, r.y1 - 1 + d);
    }
    for (let y = r.y0 - d; y < r.y1 + d; y++) {
      take(r.x0 - d, y);
      take(r.x1 - 1 + d, y);
    }
  }
  const median = (v: number[]) => (v.length ? v.sort((a, b) => a - b)[v.length >> 1]! : 255);
  return [median(channels[0]!), median(channels[1]!), median(channels[2]!), median(channels[3]!)];
}

type Rect = ReturnType<typeof pixelRect>;

/** Why a read node must not be erased before its pixels are looked at, or null. */
export function withoutEvidence(
  text: TextData,
  pageTranslated: boolean,
): Exclude<SkipReason, 'notTextLike'> | null {
  if (text.confidence === undefined) return null; // drawn or placed by hand
  if (text.confidence < MIN_CONFIDENCE) return 'lowConfidence';
  if ((text.linePolygons?.length ?? 0) > MAX_LINES) return 'tooLarge';
  if (pageTranslated && !text.translation?.trim()) {
    const glyphs = [...(text.text ?? '').replace(/[\s\p{P}\p{S}]/gu, '')].length;
    return glyphs <= 1 ? 'loneGlyph' : 'untranslated';
  }
  return null;
}

const SAID: Record<SkipReason, string> = {
  nothingToDo: 'nothing to erase',
  lowConfidence: 'its OCR confidence is too low to be sure it is lettering',
  notTextLike: 'the text mask has no pixel in its box (no lettering found there)',
  tooLarge: 'it is larger than a few lines',
  loneGlyph: 'it is a lone glyph left untranslated',
  soundEffect: 'it is a sound effect',
  untranslated: 'it has no translation while the page is translated',
  merged: 'its bubble holds another text',
};

/** Pixels of a box whose luma differs from the box's surrounding colour. */
export function standingOut(rgba: Uint8ClampedArray, width: number, height: number, r: Rect): Mask {
  const [cr, cg, cb] = ringColour(rgba, width, height, r);
  const around = 0.299 * cr + 0.587 * cg + 0.114 * cb;
  const gray = luma(rgba, width * height);
  const out = new Uint8Array(width * height);
  for (let y = r.y0; y < r.y1; y++)
    for (let x = r.x0; x < r.x1; x++)
      if (Math.abs(gray[y * width + x]! - around) > STANDS_OUT) out[y * width + x] = 1;
  return dilate(out, width, height, 1);
}

export function createFillEngine(): Engine {
  return {
    id: 'fill',
    name: 'Fill (inpaint the text pixels of each region from the artwork around them)',
    needs: ['SourceImage', 'TextBoxes'],
    produces: ['Inpainted'],
    async start(options) {
      return {
        async page({ page, blobs, skipped }) {
          const leave = (reason: SkipReason, id: string) =>
            skipped?.(reason, `Text node ${id} left as it is: ${SAID[reason]}.`, {
              textNodeId: id,
            });
          const source = imageNode(page, 'source');
          if (!source) throw new Error(`page '${page.name}' has no source image`);
          const canvas = await canvasOf(await blobBytes(blobs, source.image.blob));
          const { width, height } = canvas;
          const pixels = canvas.getContext('2d').getImageData(0, 0, width, height);
          const segmentNode = maskNode(page, 'segment');
          let segment: Mask | null = null;
          if (segmentNode) {
            const m = await canvasOf(await blobBytes(blobs, segmentNode.mask.blob));
            if (m.width === width && m.height === height)
              segment = maskFrom(
                m.getContext('2d').getImageData(0, 0, width, height).data,
                width * height,
              );
          }
          // Scale node coordinates (page space) to the image's pixels.
          const sx = width / page.width;
          const sy = height / page.height;
          const mask = new Uint8Array(width * height);
          const nodes = textNodes(page, options.textNodeIds);
          if (!nodes.length)
            skipped?.(
              'nothingToDo',
              'No text to erase on this page; its inpainted image is the source.',
            );
          const pageTranslated = textNodes(page).some(({ text }) => text.translation?.trim());
          for (const { node, text } of nodes) {
            const unfit = withoutEvidence(text, pageTranslated);
            if (unfit) {
              leave(unfit, node.id);
              continue;
            }
            const t = node.transform;
            const r = pixelRect(
              { ...t, x: t.x * sx, y: t.y * sy, width: t.width * sx, height: t.height * sy },
              width,
              height,
            );
            if (!r.w || !r.h) continue;
            let covered = 0;
            if (segment)
              for (let y = r.y0; y < r.y1; y++)
                for (let x = r.x0; x < r.x1; x++) {
                  const i = y * width + x;
                  if (segment[i]) {
                    mask[i] = 1;
                    covered++;
                  }
                }
            if (!covered && text.confidence !== undefined) {
              leave('notTextLike', node.id);
              continue;
            }
            if (!covered) {
              const own = standingOut(pixels.data, width, height, r);
              for (let i = 0; i < own.length; i++) if (own[i]) mask[i] = 1;
            }
          }
          inpaint(pixels.data, width, height, mask);
          const out = createCanvas(width, height);
          out.getContext('2d').putImageData(pixels, 0, 0);
          const hash = await blobs.put(await png(out));
          return putImageOps(page, 'inpainted', hash, width, height);
        },
      };
    },
  };
}
