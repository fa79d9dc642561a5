/**
 * `FolderStorage` in the store, for scale-out (issue 15 item 6): a folder's
 * history log is a shared log in the store's records (history-store.ts) and
 * its blobs go to the store's blob store (content-addressed, so folders share
 * it safely). Every instance on the store sees the same folders.
 */
import type { BlobStore, FolderStorage, Store } from '../kernel/store.js';
import { createStoreHistoryLog, removeStoreHistoryLog } from './history-store.js';

export function createStoreFolderStorage(store: Store, blobs: BlobStore): FolderStorage {
  return {
    shared: true,
    historyLog: (dir) => createStoreHistoryLog(store, dir),
    blobs: () => blobs,
    removeLog: (dir) => removeStoreHistoryLog(store, dir),
  };
}
