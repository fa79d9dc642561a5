/**
 * Where a project keeps the files `koharu.export` made, so `url`
 * (`/api/v1/blobs/{hash}`, the hash of the file's bytes) can serve them:
 * - a project folder's `exports/` (embedded): `<hash>-<filename>` on disk;
 * - the store (scale-out): the bytes in the shared blob store and the
 *   record `scene.exports/<log>/<hash>` (`{filename, contentType}`) naming
 *   them for that project, so every instance serves the same `url`.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { blobHash, type BlobStore, type Store } from '../../../kernel/index.js';
import type { ExportedFile } from './exports.js';

export const EXPORTS_DIR = 'exports';
const EXPORTS = 'scene.exports';

export interface ExportCache {
  /** Keeps `file`; returns the hash of its bytes and a URI for the resource link. */
  keep(file: ExportedFile): Promise<{ hash: string; uri: string }>;
  /** The kept export with this hash, or null. */
  find(hash: string): Promise<ExportedFile | null>;
}

const typeOf = (filename: string) =>
  filename.endsWith('.png')
    ? 'image/png'
    : filename.endsWith('.pdf')
      ? 'application/pdf'
      : 'application/zip';

/** The project folder's `exports/` (left out of `khr` exports). */
export function createFolderExports(projectDir: string): ExportCache {
  const dir = join(projectDir, EXPORTS_DIR);
  return {
    async keep(file) {
      const hash = blobHash(file.bytes);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${hash}-${file.filename}`);
      writeFileSync(path, file.bytes);
      return { hash, uri: pathToFileURL(path).href };
    },
    async find(hash) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return null;
      }
      const name = names.find((n) => n.startsWith(`${hash}-`));
      if (!name) return null;
      const filename = name.slice(hash.length + 1);
      return {
        bytes: new Uint8Array(readFileSync(join(dir, name))),
        contentType: typeOf(filename),
        filename,
      };
    },
  };
}

interface ExportRecord {
  filename: string;
  contentType: string;
}

/**
 * Exports of the project whose log is `log`, in the store (scale-out). No
 * instance holds a file, so the resource link names the bytes by their hash
 * (`urn:sha256:…`, RFC 8141 syntax); `url` is what fetches them.
 */
export function createStoreExports(store: Store, blobs: BlobStore, log: string): ExportCache {
  return {
    async keep(file) {
      const hash = await blobs.put(file.bytes);
      const kept: ExportRecord = { filename: file.filename, contentType: file.contentType };
      await store.transaction((tx) => tx.records.put(EXPORTS, `${log}/${hash}`, kept));
      return { hash, uri: `urn:sha256:${hash}` };
    },
    async find(hash) {
      const kept = await store.read((tx) =>
        tx.records.get<ExportRecord>(EXPORTS, `${log}/${hash}`),
      );
      if (!kept) return null;
      const bytes = await blobs.get(hash);
      return bytes ? { bytes, ...kept.value } : null;
    },
  };
}

/**
 * Forgets the exports of the project whose log is `log`. Their bytes stay in
 * the blob store, which other projects and doors share by content hash.
 */
export async function forgetStoreExports(store: Store, log: string): Promise<void> {
  await store.transaction(async (tx) => {
    for (const { key } of await tx.records.list(EXPORTS, { prefix: `${log}/` }))
      await tx.records.delete(EXPORTS, key);
  });
}
