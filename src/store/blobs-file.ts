import { randomUUID } from 'node:crypto';
import { access, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BlobStore } from '../kernel/store.js';
import { asBytes, blobHash, isBlobHash } from '../kernel/blob-hash.js';

/**
 * Blobs as files under `dir`, fanned out by the first two hex digits
 * (`ab/cdef…`). A blob is written to `dir/tmp`, synced, then renamed into
 * place, so after a crash a blob is either whole or absent.
 *
 * @example
 * const blobs = createFileBlobStore('data/blobs');
 * const hash = await blobs.put(new TextEncoder().encode('hello'));
 */
export function createFileBlobStore(dir: string): BlobStore {
  const pathOf = (hash: string): string => join(dir, hash.slice(0, 2), hash.slice(2));

  const exists = async (path: string): Promise<boolean> => {
    try {
      await access(path);
      return true;
    } catch {
      return false;
    }
  };

  return {
    async put(bytes) {
      const hash = blobHash(bytes);
      const target = pathOf(hash);
      if (await exists(target)) return hash;
      const tmpDir = join(dir, 'tmp');
      await mkdir(tmpDir, { recursive: true });
      const created = await mkdir(dirname(target), { recursive: true });
      const tmp = join(tmpDir, `${hash}.${randomUUID()}`);
      try {
        const file = await open(tmp, 'wx');
        try {
          await file.writeFile(bytes);
          await file.sync();
        } finally {
          await file.close();
        }
        await rename(tmp, target);
      } catch (error) {
        await rm(tmp, { force: true });
        throw error;
      }
      // Make the rename (and a new fan-out folder) durable too.
      await syncDir(dirname(target));
      if (created !== undefined) await syncDir(dir);
      return hash;
    },

    async get(hash) {
      if (!isBlobHash(hash)) return null;
      try {
        return asBytes(await readFile(pathOf(hash)));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },

    async has(hash) {
      return isBlobHash(hash) && exists(pathOf(hash));
    },
  };
}

/** fsync a folder; platforms that cannot open folders (Windows) skip it. */
async function syncDir(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR' || code === 'EPERM' || code === 'EACCES') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EINVAL' && code !== 'EPERM') throw error;
  } finally {
    await handle.close();
  }
}
