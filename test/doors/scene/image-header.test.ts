/** Image sizes read from headers, and the 50-megapixel cap at its real value (authority.md §4). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createCanvas } from '@napi-rs/canvas';
import {
  checkImageSize,
  MAX_IMAGE_PIXELS,
  readImageHeader,
} from '../../../src/doors/scene/files/image-header.js';
import { AirlockError } from '../../../src/kernel/errors.js';
import { gifHeader, jpegHeader, pngHeader, webpHeader } from './hostile-files.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as AirlockError).code;
  }
  return 'ok';
};

/** A VP8L (lossless WebP) header declaring width×height. */
function vp8lHeader(width: number, height: number): Uint8Array {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0);
  b.writeUInt32LE(22, 4);
  b.write('WEBPVP8L', 8);
  b.writeUInt32LE(10, 16);
  b[20] = 0x2f;
  b.writeUInt32LE(((width - 1) | ((height - 1) << 14)) >>> 0, 21);
  return new Uint8Array(b);
}

describe('image headers', () => {
  it('reads the size of PNG, JPEG and WebP files as the canvas library encodes them', async () => {
    const canvas = createCanvas(123, 45);
    canvas.getContext('2d').fillRect(0, 0, 10, 10);
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const bytes = new Uint8Array(await canvas.encode(format as 'png'));
      expect(readImageHeader(bytes)).toEqual({ format, width: 123, height: 45 });
    }
  });

  it('reads the size declared by VP8X and VP8L WebP headers and by GIF frames', () => {
    expect(readImageHeader(webpHeader(300, 200))).toEqual({
      format: 'webp',
      width: 300,
      height: 200,
    });
    expect(readImageHeader(vp8lHeader(16384, 7))).toEqual({
      format: 'webp',
      width: 16384,
      height: 7,
    });
    expect(readImageHeader(gifHeader(640, 480, 480))).toEqual({
      format: 'gif',
      width: 640,
      height: 480,
    });
  });

  it('counts a GIF frame larger than its logical screen, as decoders grow the canvas to fit it', () => {
    expect(readImageHeader(gifHeader(9000, 9000, 1))).toMatchObject({ width: 9000, height: 9000 });
    expect(codeOf(() => checkImageSize(gifHeader(9000, 9000, 1)))).toBe('requestTooLarge');
  });

  it('allows exactly 50 megapixels and refuses one row more, for every format', () => {
    expect(MAX_IMAGE_PIXELS).toBe(50_000_000);
    for (const header of [pngHeader, jpegHeader, webpHeader]) {
      expect(checkImageSize(header(10_000, 5_000))).toMatchObject({ width: 10_000, height: 5_000 });
      expect(codeOf(() => checkImageSize(header(10_000, 5_001)))).toBe('requestTooLarge');
    }
    expect(codeOf(() => checkImageSize(gifHeader(10_000, 5_001, 10_000)))).toBe('requestTooLarge');
  });

  it('names the dimensions and the limit when it refuses', () => {
    try {
      checkImageSize(pngHeader(16_000, 16_000));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AirlockError);
      expect((error as AirlockError).message).toBe(
        'The image is 16000×16000 px (256 megapixels); the limit is 50 megapixels. Scale it down and upload it again.',
      );
    }
  });

  it('refuses formats whose header it cannot read (BMP, a cut-off PNG, an empty file) as malformedRequest', () => {
    const bmp = new Uint8Array(Buffer.concat([Buffer.from('BM'), Buffer.alloc(52)]));
    expect(codeOf(() => checkImageSize(bmp))).toBe('malformedRequest');
    expect(codeOf(() => checkImageSize(pngHeader(10, 10).subarray(0, 20)))).toBe(
      'malformedRequest',
    );
    expect(codeOf(() => checkImageSize(new Uint8Array(0)))).toBe('malformedRequest');
    expect(codeOf(() => checkImageSize(pngHeader(0, 10)))).toBe('malformedRequest');
  });

  it('never throws on arbitrary bytes, alone or after each format signature', () => {
    const signatures = [
      [],
      [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
      [0xff, 0xd8],
      [...Buffer.from('RIFF\0\0\0\0WEBPVP8X')],
      [...Buffer.from('GIF89a')],
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...signatures),
        fc.uint8Array({ maxLength: 200 }),
        (signature, rest) => {
          const header = readImageHeader(new Uint8Array([...signature, ...rest]));
          if (header) expect(header.width * header.height).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
