/**
 * A project on disk (spec/scene.md "Project on disk"): `<folder>/project.json`,
 * the history's `snapshot.json` and `oplog.jsonl` (kernel file history log,
 * shared by every process that opens the project under its `oplog.lock`)
 * and `blobs/` (content-addressed). Every Airlock process on the workspace
 * may hold the project open at once: they build one history.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  AirlockError,
  openHistory,
  type BlobStore,
  type FolderStorage,
  type History,
} from '../../../kernel/index.js';
import { createFolderExports, type ExportCache } from '../files/export-cache.js';
import { emptyScene, type Scene } from '../model/model.js';
import type { Op } from '../model/ops.js';
import { SceneOpError, sceneReducer } from '../model/reducer.js';
import { checkedHistoryLog, parseStored, reasonOf, StoredFileError } from './stored-files.js';

export const ProjectFile = z.object({
  format: z.literal('airlock-scene'),
  version: z.literal(1),
  name: z.string(),
  createdAt: z.string(),
});
export type ProjectFile = z.infer<typeof ProjectFile>;

/** The whole-project lock file of earlier versions (left out of `.khr` exports). */
export const LOCK_FILE = 'lock';
/** The history log's lock file (store/history-file.ts), left out of `.khr` exports too. */
export const OPLOG_LOCK = 'oplog.lock';

export interface Project {
  readonly dir: string;
  readonly history: History<Scene, Op>;
  readonly blobs: BlobStore;
  /** The files `koharu.export` made, served at their `url`. */
  readonly exports: ExportCache;
  /** The scene with `updatedAt` taken from the last durable change. */
  scene(): Scene;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Where the project's history log and blobs are kept (given by the workspace). */
  storage: FolderStorage;
  onChange?: (change: { epoch: number; label: string }) => void;
  /** Each change another process logged, as this one catches up with it. */
  onCatchUp?: (change: { epoch: number; label: string }) => void;
  /** Compact the op log after this many entries (default: the kernel's). */
  compactEvery?: number;
}

export function readProjectFile(dir: string): ProjectFile {
  const path = join(dir, 'project.json');
  if (!existsSync(path))
    throw new AirlockError(
      'notFound',
      `No project at ${dir} (no project.json); pass createName to create one there.`,
    );
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new StoredFileError(
      dir,
      'project.json',
      '',
      `project.json is not JSON (${error.message})`,
    );
  }
  return parseStored(dir, 'project.json', ProjectFile, value);
}

/** Creates the project files in `dir` (missing or empty). */
export function initProject(dir: string, name: string, now = new Date()): void {
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    throw new AirlockError(
      'malformedRequest',
      `Cannot create a project in ${dir}: the folder is not empty; choose a missing or empty folder.`,
      { field: 'path' },
    );
  }
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  const file: ProjectFile = {
    format: 'airlock-scene',
    version: 1,
    name,
    createdAt: now.toISOString(),
  };
  writeFileSync(join(dir, 'project.json'), JSON.stringify(file, null, 2) + '\n');
}

/**
 * The epoch of the change tagged `operation` in the history of the project
 * at `dir`, or null, read without opening the project (a torn last line,
 * an append in flight, is skipped). Throws when there is no project there or
 * its files are broken.
 */
export async function findOperation(
  dir: string,
  storage: FolderStorage,
  operation: string,
): Promise<number | null> {
  const file = readProjectFile(dir);
  const log = storage.historyLog<Scene, Op>(dir);
  try {
    const history = await openHistory<Scene, Op>({
      reducer: sceneReducer,
      initial: emptyScene(file.name, file.createdAt),
      log: checkedHistoryLog(dir, log),
    });
    return history.epochOf(operation);
  } finally {
    log.close();
  }
}

export async function openProject(dir: string, options: OpenOptions): Promise<Project> {
  const file = readProjectFile(dir);
  const lastChange = () => {
    let latest = Date.parse(file.createdAt);
    for (const f of ['oplog.jsonl', 'snapshot.json']) {
      const p = join(dir, f);
      if (existsSync(p)) latest = Math.max(latest, statSync(p).mtimeMs);
    }
    return latest;
  };
  return openKept(dir, file, { log: dir, blobs: join(dir, 'blobs') }, options, {
    exports: () => createFolderExports(dir),
    release: () => undefined,
    lastChange,
    compactOnClose: true,
  });
}

/**
 * A project whose files live in the store (scale-out, `storage.shared`):
 * no lock, since every instance serves it at once; its log and blobs are
 * kept under `keys.log` and `keys.blobs`, its exports by `exports` (given
 * the project's blobs). Closing here leaves the log to the others (no
 * compaction).
 */
export function openSharedProject(
  dir: string,
  file: ProjectFile,
  keys: { log: string; blobs: string },
  options: OpenOptions,
  exports: (blobs: BlobStore) => ExportCache,
): Promise<Project> {
  return openKept(dir, file, keys, options, {
    exports,
    release: () => undefined,
    lastChange: (log) => log.changedAt?.() ?? Date.parse(file.createdAt),
    compactOnClose: false,
  });
}

type KeptLog = ReturnType<FolderStorage['historyLog']>;

async function openKept(
  dir: string,
  file: ProjectFile,
  keys: { log: string; blobs: string },
  options: OpenOptions,
  how: {
    exports(blobs: BlobStore): ExportCache;
    release(): void;
    lastChange(log: KeptLog): number;
    compactOnClose: boolean;
  },
): Promise<Project> {
  const { release } = how;
  let closeLog = () => undefined as void;
  try {
    const log = options.storage.historyLog<Scene, Op>(keys.log);
    closeLog = () => log.close();
    const history = await openHistory<Scene, Op>({
      reducer: sceneReducer,
      initial: emptyScene(file.name, file.createdAt),
      log: checkedHistoryLog(dir, log),
      ...(options.compactEvery ? { compactEvery: options.compactEvery } : {}),
      ...(options.onChange ? { onChange: options.onChange } : {}),
      ...(options.onCatchUp ? { onCatchUp: options.onCatchUp } : {}),
    }).catch((error: unknown) => {
      // Replaying the op log runs the reducer: an entry it refuses is a broken log.
      if (!(error instanceof SceneOpError)) throw error;
      throw new StoredFileError(
        dir,
        'oplog.jsonl',
        '',
        `oplog.jsonl holds an op that cannot be replayed (${error.kind}): ${reasonOf(error)}`,
      );
    });
    const blobs = options.storage.blobs(keys.blobs);
    return {
      dir,
      history,
      blobs,
      exports: how.exports(blobs),
      scene() {
        const s = history.state;
        return {
          ...s,
          project: { ...s.project, updatedAt: new Date(how.lastChange(log)).toISOString() },
        };
      },
      async close() {
        // A clean close leaves the scene snapshot on disk and an empty op log.
        try {
          if (how.compactOnClose) await history.compact();
        } finally {
          log.close();
          release();
        }
      },
    };
  } catch (error) {
    closeLog();
    release();
    throw error;
  }
}
