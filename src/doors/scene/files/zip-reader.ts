/**
 * Reading a zip with its decoded size capped (authority.md §4: "archives
 * inflate to ≤ 2 GiB and ≤ 100× their size"). The central directory lists
 * the entries (APPNOTE.TXT §4.3); the sizes it declares are checked first, a
 * cheap early refusal, and then every byte is counted as it leaves the
 * inflater, which is fed a little at a time, so a zip that lies about its
 * sizes stops at the cap with little memory spent.
 */
import { Inflate } from 'fflate';
import { AirlockError } from '../../../kernel/index.js';

export const MAX_INFLATED_BYTES = 2 * 1024 ** 3;
export const MAX_INFLATE_RATIO = 100;

export interface InflateCaps {
  /** Inflated bytes of all entries together. */
  maxBytes: number;
  /** Inflated bytes per byte of the zip. */
  maxRatio: number;
}

export const ARCHIVE_CAPS: InflateCaps = {
  maxBytes: MAX_INFLATED_BYTES,
  maxRatio: MAX_INFLATE_RATIO,
};

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  compressedSize: number;
  declaredSize: number;
  localOffset: number;
}

export interface ZipReader {
  readonly entries: readonly ZipEntry[];
  /** Inflates one entry into `sink`, chunk by chunk, counting against the caps. */
  inflate(entry: ZipEntry, sink: (chunk: Uint8Array) => void): void;
}

/** Compressed bytes handed to the inflater at a time: at most ~1032× this comes out per step. */
const STEP = 16 * 1024;
const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

const notAZip = (why: string) =>
  new AirlockError(
    'malformedRequest',
    `The upload is not a usable zip (${why}); send a .khr export.`,
  );

export const formatBytes = (n: number) =>
  n >= 1024 ** 3
    ? `${Math.round((n / 1024 ** 3) * 10) / 10} GiB`
    : n >= 1024 ** 2
      ? `${Math.round((n / 1024 ** 2) * 10) / 10} MiB`
      : n >= 1024
        ? `${Math.round((n / 1024) * 10) / 10} KiB`
        : `${n} bytes`;

function tooLarge(caps: InflateCaps, zipSize: number, what: string): AirlockError {
  const limit = Math.min(caps.maxBytes, caps.maxRatio * zipSize);
  const which =
    limit < caps.maxBytes
      ? `${caps.maxRatio}× the ${formatBytes(zipSize)} archive`
      : `${formatBytes(caps.maxBytes)} in all`;
  return new AirlockError(
    'requestTooLarge',
    `The archive ${what} ${formatBytes(limit)}; an archive may inflate to at most ${which}. Send a smaller .khr, or one exported by Airlock.`,
    { limit, zipBytes: zipSize },
  );
}

function readDirectory(zip: Uint8Array, view: DataView): ZipEntry[] {
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === EOCD) {
      end = at;
      break;
    }
  }
  if (end < 0) throw notAZip('no end of central directory');
  const count = view.getUint16(end + 10, true);
  const size = view.getUint32(end + 12, true);
  const start = view.getUint32(end + 16, true);
  if (start + size > end) throw notAZip('the central directory lies outside the file');
  const entries: ZipEntry[] = [];
  let at = start;
  for (let i = 0; i < count; i++) {
    if (at + 46 > end || view.getUint32(at, true) !== CENTRAL)
      throw notAZip('a damaged central directory');
    const flags = view.getUint16(at + 8, true);
    const nameLength = view.getUint16(at + 28, true);
    const nameBytes = zip.subarray(at + 46, at + 46 + nameLength);
    const entry: ZipEntry = {
      // Bit 11: the name is UTF-8; otherwise it is read byte for byte.
      name: Buffer.from(nameBytes).toString(flags & 0x800 ? 'utf8' : 'latin1'),
      method: view.getUint16(at + 10, true),
      compressedSize: view.getUint32(at + 20, true),
      declaredSize: view.getUint32(at + 24, true),
      localOffset: view.getUint32(at + 42, true),
    };
    if (flags & 1) throw notAZip(`entry '${entry.name}' is encrypted`);
    if ([entry.compressedSize, entry.declaredSize, entry.localOffset].includes(0xffffffff))
      throw notAZip(`entry '${entry.name}' needs zip64, which a .khr never does`);
    if (entry.method !== 0 && entry.method !== 8)
      throw notAZip(`entry '${entry.name}' uses compression method ${entry.method}`);
    entries.push(entry);
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return entries;
}

/** The entry's compressed bytes, found through its local header. */
function dataOf(zip: Uint8Array, view: DataView, entry: ZipEntry): Uint8Array {
  const at = entry.localOffset;
  if (at + 30 > zip.length || view.getUint32(at, true) !== LOCAL)
    throw notAZip(`entry '${entry.name}' has no local header`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > zip.length)
    throw notAZip(`entry '${entry.name}' runs past the end of the file`);
  return zip.subarray(start, start + entry.compressedSize);
}

/**
 * Reads the zip's directory and refuses it when the sizes it declares are
 * already over the caps; what it hands out inflates within them or throws
 * `requestTooLarge` as soon as one byte more comes out.
 */
export function openZip(zip: Uint8Array, caps: InflateCaps = ARCHIVE_CAPS): ZipReader {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const entries = readDirectory(zip, view);
  const limit = Math.min(caps.maxBytes, caps.maxRatio * zip.length);
  const declared = entries.reduce((sum, e) => sum + e.declaredSize, 0);
  if (declared > limit)
    throw tooLarge(caps, zip.length, `declares ${formatBytes(declared)} inflated, over`);
  let inflated = 0;
  const take = (chunk: Uint8Array, sink: (chunk: Uint8Array) => void) => {
    inflated += chunk.length;
    if (inflated > limit) throw tooLarge(caps, zip.length, 'inflates past');
    sink(chunk);
  };
  return {
    entries,
    inflate(entry, sink) {
      const data = dataOf(zip, view, entry);
      if (entry.method === 0) return take(data, sink);
      const inflater = new Inflate((chunk) => take(chunk, sink));
      try {
        if (data.length === 0) inflater.push(data, true);
        for (let at = 0; at < data.length; at += STEP)
          inflater.push(data.subarray(at, at + STEP), at + STEP >= data.length);
      } catch (error) {
        // fflate's own errors carry a numeric code; the cap's and the sink's pass through.
        if (typeof (error as { code?: unknown }).code !== 'number') throw error;
        throw notAZip(`entry '${entry.name}' is damaged: ${(error as Error).message}`);
      }
    },
  };
}
