/**
 * Pixels: decoding page images, PNG encoding and thumbnails, through
 * @napi-rs/canvas (prebuilt, no system libraries). Fonts come from the
 * system (Debian's DejaVu and Liberation under /usr/share/fonts, which the
 * canvas library loads itself); `DEFAULT_FONT` is the bundled fallback.
 */
import { createCanvas, GlobalFonts, loadImage, type Canvas } from '@napi-rs/canvas';
import { AirlockError, type BlobStore } from '../../../kernel/index.js';
import { checkImageSize } from './image-header.js';
import type { Page, Scene } from '../model/model.js';

export const THUMBNAIL_MAX = 320;

export function fontFamilies(): string[] {
  return GlobalFonts.families.map((f) => f.family);
}

/** The font used when neither the node nor the pipeline names one. */
export function defaultFont(): string {
  const families = fontFamilies();
  return (
    ['DejaVu Sans', 'Liberation Sans'].find((f) => families.includes(f)) ??
    families[0] ??
    'sans-serif'
  );
}

/**
 * Decodes an image after its header passed the pixel cap (image-header.ts):
 * nothing over the cap, and no format whose header the door cannot read,
 * reaches the decoder.
 */
export async function decode(bytes: Uint8Array) {
  checkImageSize(bytes);
  try {
    return await loadImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch {
    throw new AirlockError(
      'malformedRequest',
      'The file is not an image this server can read; upload PNG, JPEG, WebP or GIF.',
    );
  }
}

/** A canvas holding the image at its natural size. */
export async function canvasOf(bytes: Uint8Array): Promise<Canvas> {
  const image = await decode(bytes);
  const canvas = createCanvas(image.width, image.height);
  canvas.getContext('2d').drawImage(image, 0, 0);
  return canvas;
}

export async function png(canvas: Canvas): Promise<Uint8Array> {
  return new Uint8Array(await canvas.encode('png'));
}

/**
 * Re-encodes any readable image as PNG. PNG bytes pass through, after the
 * pixel cap: whoever takes them next (OCR, the PDF writer) decodes them.
 */
export async function asPng(bytes: Uint8Array): Promise<Uint8Array> {
  return checkImageSize(bytes).format === 'png' ? bytes : png(await canvasOf(bytes));
}

export async function thumbnail(bytes: Uint8Array, max = THUMBNAIL_MAX): Promise<Uint8Array> {
  const image = await decode(bytes);
  const scale = Math.min(1, max / Math.max(image.width, image.height));
  const w = Math.max(1, Math.round(image.width * scale));
  const h = Math.max(1, Math.round(image.height * scale));
  const canvas = createCanvas(w, h);
  canvas.getContext('2d').drawImage(image, 0, 0, w, h);
  return png(canvas);
}

/** The page's image node of that role, or null. */
export function imageNode(page: Page, role: 'source' | 'inpainted' | 'rendered') {
  for (const node of page.nodes)
    if ('image' in node.kind && node.kind.image.role === role)
      return { node, image: node.kind.image };
  return null;
}

const sceneBlobs = new WeakMap<Scene, Set<string>>();

/** The blob hashes the scene's nodes name (images and masks), worked out once per scene value. */
export function blobsOf(scene: Scene): Set<string> {
  let found = sceneBlobs.get(scene);
  if (found) return found;
  found = new Set();
  const stack: unknown[] = [scene.pages];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) {
      if (key === 'blob' && typeof child === 'string') found.add(child);
      else stack.push(child);
    }
  }
  sceneBlobs.set(scene, found);
  return found;
}

/** Topmost finished image of a page: rendered, else inpainted, else source. */
export function bestImage(page: Page) {
  return imageNode(page, 'rendered') ?? imageNode(page, 'inpainted') ?? imageNode(page, 'source');
}

export async function blobBytes(blobs: BlobStore, hash: string): Promise<Uint8Array> {
  const bytes = await blobs.get(hash);
  if (!bytes)
    throw new AirlockError(
      'notFound',
      `Blob ${hash} is missing from the project's blobs/ folder; add the page image again (POST /api/v1/pages or import_pages).`,
    );
  return bytes;
}
