/**
 * The capped zip reader and the khr unpacker: archives inflate to at most
 * 2 GiB and 100× their size (authority.md §4), checked from the declared
 * sizes and again while inflating, so lying headers do not get past.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import {
  ARCHIVE_CAPS,
  MAX_INFLATED_BYTES,
  MAX_INFLATE_RATIO,
  openZip,
  type ZipReader,
} from '../../../src/doors/scene/files/zip-reader.js';
import { unpackKhr } from '../../../src/doors/scene/files/khr-import.js';
import { AirlockError } from '../../../src/kernel/errors.js';
import { tempDir } from './helpers.js';
import { projectJson, zipOf } from './hostile-files.js';

const MiB = 1024 * 1024;

const failureOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof AirlockError)) throw error;
    return { code: error.code, message: error.message };
  }
  return null;
};

/** Inflates every entry, counting bytes; returns the failure, if any, and how much came out. */
function drain(zip: ZipReader) {
  let out = 0;
  const failure = failureOf(() => {
    for (const entry of zip.entries) zip.inflate(entry, (chunk) => (out += chunk.length));
  });
  return { failure, out };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('zip reader', () => {
  it('caps archives at 2 GiB inflated and 100× their size', () => {
    expect(MAX_INFLATED_BYTES).toBe(2 * 1024 * 1024 * 1024);
    expect(MAX_INFLATE_RATIO).toBe(100);
    expect(ARCHIVE_CAPS).toEqual({ maxBytes: MAX_INFLATED_BYTES, maxRatio: MAX_INFLATE_RATIO });
  });

  it('reads back what fflate zips, stored and deflated entries alike', () => {
    const files = {
      'a.txt': new TextEncoder().encode('hello '.repeat(100)),
      'dir/b.bin': new Uint8Array([1, 2, 3, 4, 5]),
      empty: new Uint8Array(0),
    };
    for (const level of [0, 6] as const) {
      const zip = openZip(zipSync(files, { level }));
      const got: Record<string, Uint8Array> = {};
      for (const entry of zip.entries) {
        const chunks: Uint8Array[] = [];
        zip.inflate(entry, (c) => chunks.push(c));
        got[entry.name] = new Uint8Array(Buffer.concat(chunks));
      }
      expect(got).toEqual(files);
    }
  });

  it('refuses, before inflating, a zip whose declared sizes add up to more than 2 GiB', async () => {
    // 22 MiB stored keeps the ratio under 100×, so the 2 GiB total is the cap that binds.
    const zip = await zipOf([
      { name: 'filler', bytes: new Uint8Array(22 * MiB), method: 'store' },
      { name: 'claims', bytes: new Uint8Array(10), declaredSize: 2 * 1024 * MiB },
    ]);
    expect(failureOf(() => openZip(zip))).toEqual({
      code: 'requestTooLarge',
      message: expect.stringContaining('an archive may inflate to at most 2 GiB in all'),
    });
  });

  it('stops a zip that declares 1 KiB but inflates 20 MiB of zeros at 100× its size, while inflating', async () => {
    const zip = await zipOf([{ name: 'zeros', zeros: 20 * MiB, declaredSize: 1024 }]);
    const { failure, out } = drain(openZip(zip));
    expect(failure).toEqual({
      code: 'requestTooLarge',
      message: expect.stringMatching(/^The archive inflates past .*at most 100× the .* archive/),
    });
    expect(out).toBeLessThanOrEqual(100 * zip.length);
  });

  it('stops at the total cap while inflating, whatever the headers declare (lower cap for the test)', async () => {
    const zip = await zipOf([{ name: 'zeros', zeros: 8 * MiB, declaredSize: 1 }]);
    const { failure, out } = drain(openZip(zip, { maxBytes: MiB, maxRatio: 1e9 }));
    expect(failure?.code).toBe('requestTooLarge');
    expect(out).toBeLessThanOrEqual(MiB);
  });

  it('refuses a file that is not a zip, and a damaged deflate stream, as malformedRequest', async () => {
    expect(failureOf(() => openZip(new TextEncoder().encode('not a zip')))?.code).toBe(
      'malformedRequest',
    );
    const zip = await zipOf([{ name: 'a', bytes: new TextEncoder().encode('x'.repeat(1000)) }]);
    const damaged = zip.slice();
    damaged.fill(0xff, 30 + 1, 30 + 1 + 4); // the start of the deflate data, after the name
    expect(drain(openZip(damaged)).failure?.code).toBe('malformedRequest');
  });

  it('answers any damage to a zip with a value (a kernel error) or its contents, never a crash', async () => {
    const zip = zipSync(
      { 'project.json': projectJson('P'), 'blobs/aa/b': new Uint8Array(300).fill(7) },
      { level: 6 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(zip.length - 1), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 8,
        }),
        async (edits) => {
          const bytes = zip.slice();
          for (const [at, value] of edits) bytes[at] = value;
          const failure = failureOf(() => drain(openZip(bytes)));
          if (failure) expect(['malformedRequest', 'requestTooLarge']).toContain(failure.code);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('khr unpacking', () => {
  const target = () => {
    const dir = tempDir();
    dirs.push(dir);
    return join(dir, 'p.khrproj');
  };

  it('unpacks the project and skips entries outside the folder, the lock and caches', async () => {
    const to = target();
    const zip = await zipOf([
      { name: 'project.json', bytes: projectJson('Named') },
      { name: '../escape', bytes: new Uint8Array([1]) },
      { name: 'lock', bytes: new Uint8Array([1]) },
      { name: 'exports/x.png', bytes: new Uint8Array([1]) },
      { name: 'blobs/ab/cd', bytes: new Uint8Array([9]) },
    ]);
    expect(unpackKhr(zip, to)).toBe('Named');
    expect(readFileSync(join(to, 'blobs/ab/cd'))).toEqual(Buffer.from([9]));
    expect(existsSync(join(to, '..', 'escape'))).toBe(false);
    expect(existsSync(join(to, 'lock'))).toBe(false);
    expect(existsSync(join(to, 'exports'))).toBe(false);
  });

  it('refuses a project.json that is not JSON with malformedRequest naming project.json', async () => {
    const zip = await zipOf([{ name: 'project.json', bytes: new TextEncoder().encode('{"x') }]);
    expect(failureOf(() => unpackKhr(zip, target()))).toEqual({
      code: 'malformedRequest',
      message: expect.stringContaining('project.json'),
    });
  });

  it('refuses an entry that is a file and a folder at once with malformedRequest', async () => {
    const zip = await zipOf([
      { name: 'project.json', bytes: projectJson('P') },
      { name: 'blobs/x', bytes: new Uint8Array([1]) },
      { name: 'blobs/x/y', bytes: new Uint8Array([2]) },
    ]);
    expect(failureOf(() => unpackKhr(zip, target()))?.code).toBe('malformedRequest');
  });

  it('writes nothing past the cap: a lying zip stops at 100× its size', async () => {
    const to = target();
    const zip = await zipOf([
      { name: 'project.json', bytes: projectJson('P') },
      { name: 'blobs/00/zeros', zeros: 20 * MiB, declaredSize: 1 },
    ]);
    expect(failureOf(() => unpackKhr(zip, to))?.code).toBe('requestTooLarge');
    expect(readFileSync(join(to, 'blobs/00/zeros')).length).toBeLessThanOrEqual(100 * zip.length);
  });
});
