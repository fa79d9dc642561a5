/** `FolderStorage` on plain files: the fsynced op log and the content-addressed blob folder. */
import type { FolderStorage } from '../kernel/store.js';
import { createFileBlobStore } from './blobs-file.js';
import { createFileHistoryLog, removeFileHistoryLog } from './history-file.js';

export const fileFolderStorage: FolderStorage = {
  historyLog: (dir) => createFileHistoryLog(dir),
  blobs: (dir) => createFileBlobStore(dir),
  removeLog: async (dir) => removeFileHistoryLog(dir),
};
