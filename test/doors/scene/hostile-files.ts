/**
 * Hostile inputs built in memory, so no large file is ever committed: a real
 * PNG whose few kilobytes decode to gigapixels, hand-built image headers, and
 * zips (stored or deflated, with honest or lying declared sizes) of real
 * bytes or of many zeros deflated in pieces.
 */
import { once } from 'node:events';
import { createDeflateRaw, crc32, deflateRawSync, deflateSync } from 'node:zlib';

const u16le = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

function pngChunk(type: string, data: Uint8Array): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), body, u32be(crc32(body))]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The PNG signature and an IHDR declaring width×height (1-bit grey), nothing else. */
export function pngHeader(width: number, height: number): Uint8Array {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([1, 0, 0, 0, 0])]);
  return new Uint8Array(Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]));
}

/**
 * A complete, decodable 1-bit grey PNG of zeros: 16000×16000 is about 31 KB
 * on the wire and a gigabyte of RGBA once decoded.
 */
export function blankPng(width: number, height: number): Uint8Array {
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height);
  return new Uint8Array(
    Buffer.concat([
      pngHeader(width, height),
      pngChunk('IDAT', deflateSync(rows, { level: 9 })),
      pngChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

/** JPEG SOI, an APP0 segment, then a baseline SOF0 declaring width×height. */
export function jpegHeader(width: number, height: number): Uint8Array {
  const app0 = Buffer.from([
    0xff,
    0xe0,
    0x00,
    0x10,
    ...Buffer.from('JFIF\0'),
    1,
    1,
    0,
    0,
    1,
    0,
    1,
    0,
    0,
  ]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    8,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    3,
  ]);
  const components = Buffer.from([1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, components]));
}

/** A RIFF/WEBP file with one VP8X chunk declaring a width×height canvas. */
export function webpHeader(width: number, height: number): Uint8Array {
  const u24 = (n: number) => Buffer.from([n & 255, (n >> 8) & 255, (n >> 16) & 255]);
  const vp8x = Buffer.concat([Buffer.from([0, 0, 0, 0]), u24(width - 1), u24(height - 1)]);
  const chunk = Buffer.concat([Buffer.from('VP8X'), u32le(vp8x.length), vp8x]);
  return new Uint8Array(
    Buffer.concat([Buffer.from('RIFF'), u32le(4 + chunk.length), Buffer.from('WEBP'), chunk]),
  );
}

/** A GIF89a whose logical screen is small but whose first frame is width×height. */
export function gifHeader(width: number, height: number, screen = 1): Uint8Array {
  return new Uint8Array(
    Buffer.concat([
      Buffer.from('GIF89a'),
      u16le(screen),
      u16le(screen),
      Buffer.from([0, 0, 0]), // no global colour table
      Buffer.from([0x2c]),
      u16le(0),
      u16le(0),
      u16le(width),
      u16le(height),
      Buffer.from([0]), // no local colour table
      Buffer.from([2, 1, 0, 0]), // LZW minimum code size, one empty-ish sub-block, terminator
      Buffer.from([0x3b]),
    ]),
  );
}

export type ZipSource =
  | { name: string; bytes: Uint8Array; method?: 'store' | 'deflate'; declaredSize?: number }
  | { name: string; zeros: number; declaredSize?: number };

/** `zeros` zero bytes, raw-deflated 1 MiB at a time (memory stays at the compressed size). */
async function deflatedZeros(total: number): Promise<{ data: Buffer; crc: number }> {
  const piece = Buffer.alloc(1 << 20);
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (c: Buffer) => out.push(c));
  const ended = once(deflate, 'end');
  let crc = 0;
  for (let left = total; left > 0; left -= piece.length) {
    const part = left >= piece.length ? piece : piece.subarray(0, left);
    crc = crc32(part, crc);
    if (!deflate.write(part)) await once(deflate, 'drain');
  }
  deflate.end();
  await ended;
  return { data: Buffer.concat(out), crc };
}

/** A zip (no zip64) of the entries; `declaredSize` makes the headers lie about the inflated size. */
export async function zipOf(entries: ZipSource[]): Promise<Uint8Array> {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    let data: Buffer;
    let crc: number;
    let size: number;
    let method: number;
    if ('zeros' in entry) {
      ({ data, crc } = await deflatedZeros(entry.zeros));
      size = entry.zeros;
      method = 8;
    } else {
      const store = entry.method === 'store';
      data = store ? Buffer.from(entry.bytes) : deflateRawSync(entry.bytes);
      crc = crc32(entry.bytes);
      size = entry.bytes.length;
      method = store ? 0 : 8;
    }
    const declared = entry.declaredSize ?? size;
    const common = Buffer.concat([
      u16le(20),
      u16le(0x0800), // UTF-8 names
      u16le(method),
      u16le(0),
      u16le(0x21),
      u32le(crc),
      u32le(data.length),
      u32le(declared),
      u16le(name.length),
      u16le(0),
    ]);
    const local = Buffer.concat([u32le(0x04034b50), common, name, data]);
    centrals.push(
      Buffer.concat([
        u32le(0x02014b50),
        u16le(20),
        common,
        u16le(0),
        u16le(0),
        u16le(0),
        u32le(0),
        u32le(offset),
        name,
      ]),
    );
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.concat([
    u32le(0x06054b50),
    u16le(0),
    u16le(0),
    u16le(entries.length),
    u16le(entries.length),
    u32le(directory.length),
    u32le(offset),
    u16le(0),
  ]);
  return new Uint8Array(Buffer.concat([...locals, directory, end]));
}

/** A valid project.json for a khr named `name`. */
export const projectJson = (name: string) =>
  new TextEncoder().encode(
    JSON.stringify({
      format: 'airlock-scene',
      version: 1,
      name,
      createdAt: '2024-01-01T00:00:00.000Z',
    }),
  );

/** A history snapshot (kernel §7) holding `pages`, as `snapshot.json` bytes. */
export const snapshotJson = (name: string, pages: unknown[] = []) =>
  new TextEncoder().encode(
    JSON.stringify({
      epoch: 1,
      state: {
        project: {
          name,
          createdAt: '2024-01-01T00:00:00.000Z',
          updatedAt: '2024-01-01T00:00:00.000Z',
          style: {},
        },
        pages,
      },
      undo: [],
      redo: [],
    }),
  );
