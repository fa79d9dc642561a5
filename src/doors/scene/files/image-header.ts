/**
 * An image's pixel size read from its header, before anything decodes it
 * (authority.md §4: "Decoded sizes are capped, not only encoded ones: images
 * ≤ 50 megapixels"). A few kilobytes of PNG can declare 16000×16000 pixels,
 * a gigabyte once decoded, so the door reads the header first and decodes
 * only the formats whose header it can read: PNG (IHDR), JPEG (SOFn), WebP
 * (VP8, VP8L, VP8X) and GIF (logical screen and every frame).
 */
import { AirlockError } from '../../../kernel/index.js';

export const MAX_IMAGE_PIXELS = 50_000_000;

export type ImageFormat = 'png' | 'jpeg' | 'webp' | 'gif';

export interface ImageHeader {
  format: ImageFormat;
  width: number;
  height: number;
}

const ascii = (bytes: Uint8Array, at: number, text: string) =>
  text.split('').every((c, i) => bytes[at + i] === c.charCodeAt(0));

/** The format and size the header declares; null when the format is not one of the four or the header is cut short. */
export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const has = (end: number) => bytes.length >= end;
  if (ascii(bytes, 0, '\x89PNG\r\n\x1a\n')) {
    // The first chunk is IHDR (PNG §11.2.2); APNG frames never exceed it.
    if (!has(24) || !ascii(bytes, 12, 'IHDR')) return null;
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpegHeader(bytes, view);
  if (ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return webpHeader(bytes, view);
  if (ascii(bytes, 0, 'GIF87a') || ascii(bytes, 0, 'GIF89a')) return gifHeader(bytes, view);
  return null;
}

/** Walks the marker segments to the first start-of-frame (ITU T.81 §B.2). */
function jpegHeader(bytes: Uint8Array, view: DataView): ImageHeader | null {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    // Standalone markers carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image or scan before any frame
    const length = view.getUint16(at + 2);
    const isFrame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (isFrame) {
      if (at + 9 > bytes.length) return null;
      const height = view.getUint16(at + 5);
      const width = view.getUint16(at + 7);
      // A height of 0 defers to a DNL marker later on: no size to check, so no decode.
      return height === 0 ? null : { format: 'jpeg', width, height };
    }
    if (length < 2) return null;
    at += 2 + length;
  }
  return null;
}

/** The first chunk after `RIFF….WEBP` (WebP container specification). */
function webpHeader(bytes: Uint8Array, view: DataView): ImageHeader | null {
  if (bytes.length < 30) return null;
  const u24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16);
  if (ascii(bytes, 12, 'VP8X')) return { format: 'webp', width: u24(24) + 1, height: u24(27) + 1 };
  if (ascii(bytes, 12, 'VP8L')) {
    if (bytes[20] !== 0x2f) return null;
    const bits = view.getUint32(21, true);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (ascii(bytes, 12, 'VP8 ')) {
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return null;
    return {
      format: 'webp',
      width: view.getUint16(26, true) & 0x3fff,
      height: view.getUint16(28, true) & 0x3fff,
    };
  }
  return null;
}

/**
 * The logical screen, widened to every frame's extent: decoders grow the
 * canvas to fit a frame larger than the screen (GIF89a §18, §20).
 */
function gifHeader(bytes: Uint8Array, view: DataView): ImageHeader | null {
  if (bytes.length < 13) return null;
  let width = view.getUint16(6, true);
  let height = view.getUint16(8, true);
  const table = (flags: number) => (flags & 0x80 ? 3 << ((flags & 7) + 1) : 0);
  let at = 13 + table(bytes[10]!);
  const skipSubBlocks = () => {
    while (at < bytes.length && bytes[at] !== 0) at += bytes[at]! + 1;
    at++;
  };
  while (at < bytes.length) {
    const block = bytes[at]!;
    if (block === 0x3b) break; // trailer
    if (block === 0x21) {
      at += 2; // extension introducer and label
      skipSubBlocks();
    } else if (block === 0x2c) {
      if (at + 10 > bytes.length) return null;
      width = Math.max(width, view.getUint16(at + 1, true) + view.getUint16(at + 5, true));
      height = Math.max(height, view.getUint16(at + 3, true) + view.getUint16(at + 7, true));
      at += 10 + table(bytes[at + 9]!) + 1; // descriptor, local table, LZW code size
      skipSubBlocks();
    } else return null;
  }
  return { format: 'gif', width, height };
}

/**
 * The header of an image the door may decode, or the reason it may not:
 * `malformedRequest` for an unreadable or unsupported header, `requestTooLarge`
 * naming the size when it is over MAX_IMAGE_PIXELS.
 */
export function checkImageSize(bytes: Uint8Array): ImageHeader {
  const header = readImageHeader(bytes);
  if (!header || header.width === 0 || header.height === 0)
    throw new AirlockError(
      'malformedRequest',
      'The file is not an image this server can read; upload PNG, JPEG, WebP or GIF.',
    );
  const pixels = header.width * header.height;
  if (pixels > MAX_IMAGE_PIXELS)
    throw new AirlockError(
      'requestTooLarge',
      `The image is ${header.width}×${header.height} px (${megapixels(pixels)} megapixels); the limit is ${megapixels(MAX_IMAGE_PIXELS)} megapixels. Scale it down and upload it again.`,
      { width: header.width, height: header.height, limit: MAX_IMAGE_PIXELS },
    );
  return header;
}

const megapixels = (pixels: number) => String(Math.round(pixels / 100_000) / 10);
