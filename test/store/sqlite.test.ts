import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileBlobStore } from '../../src/store/blobs-file.js';
import { createSqliteStore } from '../../src/store/sqlite/index.js';
import { blobContract } from './blob-contract.js';
import { storeContract } from './contract.js';

const storeDir = await mkdtemp(join(tmpdir(), 'airlock-sqlite-'));
storeContract(
  'sqlite',
  () => createSqliteStore({ path: join(storeDir, 'airlock.db') }),
  () => rm(storeDir, { recursive: true, force: true }),
);

const blobDir = await mkdtemp(join(tmpdir(), 'airlock-blobs-'));
blobContract('file', async () => createFileBlobStore(blobDir), {
  // Fan-out folders are two hex digits; `tmp` holds writes in progress.
  async countStored() {
    const fans = (await readdir(blobDir)).filter((name) => /^[0-9a-f]{2}$/.test(name));
    const counts = await Promise.all(
      fans.map(async (fan) => (await readdir(join(blobDir, fan))).length),
    );
    return counts.reduce((a, b) => a + b, 0);
  },
  cleanup: () => rm(blobDir, { recursive: true, force: true }),
});
