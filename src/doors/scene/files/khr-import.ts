/**
 * Unpacking a `khr` (spec/scene.md "Project on disk") into a project folder.
 * The zip is read through zip-reader.ts, so what it inflates to is capped
 * while it inflates (authority.md §4) and each entry streams to its file;
 * entries that would land outside the folder, or that an export leaves out
 * (the lock, caches), are skipped. The snapshot and op log are checked when
 * the unpacked project is opened (stored-files.ts).
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { AirlockError } from '../../../kernel/index.js';
import { KHR_SKIPPED } from './exports.js';
import { ProjectFile } from '../project/project.js';
import { describeProblem } from '../project/stored-files.js';
import { openZip, type InflateCaps, type ZipEntry, type ZipReader } from './zip-reader.js';

/** project.json holds a name and a date; anything bigger is not one. */
const MAX_PROJECT_JSON = 64 * 1024;

/** Where an entry goes inside the folder, or null to skip it. */
function placeOf(name: string): string | null {
  if (name.endsWith('/') || name.includes('\0')) return null;
  const clean = normalize(name);
  if (
    clean === '.' ||
    clean.startsWith('..') ||
    clean.startsWith(sep) ||
    clean.includes(`..${sep}`) ||
    KHR_SKIPPED.has(clean) ||
    KHR_SKIPPED.has(clean.split(sep)[0]!)
  )
    return null;
  return clean;
}

function readProjectJson(zip: ZipReader): { name: string } {
  const entry = zip.entries.find((e) => e.name === 'project.json');
  const refuse = (why: string) =>
    new AirlockError(
      'malformedRequest',
      `The zip has no valid project.json at its root (${why}); send a .khr export of a scene project.`,
      { file: 'project.json' },
    );
  if (!entry) throw refuse('none found');
  const chunks: Uint8Array[] = [];
  let size = 0;
  zip.inflate(entry, (chunk) => {
    size += chunk.length;
    if (size > MAX_PROJECT_JSON) throw refuse(`it is over ${MAX_PROJECT_JSON / 1024} KiB`);
    chunks.push(chunk);
  });
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw refuse(`it is not JSON: ${(error as Error).message}`);
  }
  const parsed = ProjectFile.safeParse(value);
  if (!parsed.success)
    throw refuse(describeProblem('project.json', parsed.error.issues[0]!, value).detail);
  return parsed.data;
}

/** Streams one entry into its file; a name that cannot be a file there is the zip's fault. */
function writeEntry(zip: ZipReader, entry: ZipEntry, path: string): void {
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, 'w');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (!['ENOTDIR', 'EISDIR', 'EEXIST', 'ENAMETOOLONG'].includes(code)) throw error;
    throw new AirlockError(
      'malformedRequest',
      `The zip's entry '${entry.name}' cannot be unpacked (${code}: a file and a folder share a name); send a .khr export.`,
    );
  }
  try {
    zip.inflate(entry, (chunk) => {
      writeSync(fd, chunk);
    });
  } finally {
    closeSync(fd);
  }
}

/**
 * Unpacks a `khr` zip into `target` (which must not exist); returns the
 * project's name. `caps` is for tests; imports use the authority.md §4 caps.
 */
export function unpackKhr(bytes: Uint8Array, target: string, caps?: InflateCaps): string {
  const zip = openZip(bytes, caps);
  const project = readProjectJson(zip);
  mkdirSync(join(target, 'blobs'), { recursive: true });
  for (const entry of zip.entries) {
    const place = placeOf(entry.name);
    if (place !== null) writeEntry(zip, entry, join(target, place));
  }
  return project.name;
}
