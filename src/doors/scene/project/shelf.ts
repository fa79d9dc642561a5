/**
 * Where the workspace's projects are kept (spec/scene.md "Project on disk";
 * issue 15 item 6). Two shelves, picked by the workspace's folder storage:
 * - `local` (the embedded default): project folders on this machine's disk,
 *   each with `project.json` and an op log every process on the data folder
 *   appends to (issue 36 item 4);
 * - `shared` (scale-out): each project's `project.json` is a record in the
 *   store and its log and blobs are kept by the shared folder storage, so
 *   every instance serves the same projects (deleting one removes its record,
 *   log and export records). The workspace's open project is
 *   a record too (`scene.workspace/current`), so every instance serves the
 *   same scene. A project is named by its folder path relative to the data
 *   folder, the same on every instance configured alike.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import {
  AirlockError,
  openHistory,
  type FolderStorage,
  type Store,
} from '../../../kernel/index.js';
import { createStoreExports, forgetStoreExports } from '../files/export-cache.js';
import { emptyScene, type Scene } from '../model/model.js';
import type { Op } from '../model/ops.js';
import {
  findOperation,
  initProject,
  openProject,
  openSharedProject,
  readProjectFile,
  type OpenOptions,
  type Project,
  type ProjectFile,
} from './project.js';
import { sceneReducer } from '../model/reducer.js';
import { PROJECT_SUFFIX, slugify, type ProjectRoots } from './roots.js';

export interface ShelvedProject {
  id: string;
  path: string;
  name: string;
}

export interface ProjectShelf {
  readonly shared: boolean;
  /** The project file at `dir`; notFound when there is none. */
  read(dir: string): Promise<ProjectFile>;
  /** Creates a project named `name` at `dir`; refused when something is there. */
  init(dir: string, name: string): Promise<void>;
  /** Where `open_project {path, createName}` creates (spec/scene.md). */
  creationFolder(dir: string, name: string): Promise<string>;
  /** A fresh folder path for a new project name in the first root. */
  freshFolder(name: string): Promise<string>;
  list(): Promise<ShelvedProject[]>;
  open(dir: string, options: Omit<OpenOptions, 'storage'>): Promise<Project>;
  /** The epoch the change tagged `operation` produced in the project at `dir`, or null. */
  findOperation(dir: string, operation: string): Promise<number | null>;
  /** Deletes a project that is not the open one. */
  remove(dir: string, id: string): Promise<void>;
  /** The workspace's open project's folder (null: none open), a record in the store. */
  current(): Promise<string | null>;
  setCurrent(dir: string | null): Promise<void>;
}

export const projectIdOf = (dir: string) => {
  const b = basename(dir);
  return b.endsWith(PROJECT_SUFFIX) ? b.slice(0, -PROJECT_SUFFIX.length) : b;
};

const nameAt = (path: string): string | null => {
  try {
    return (
      (JSON.parse(readFileSync(join(path, 'project.json'), 'utf8')) as { name?: string }).name ??
      null
    );
  } catch {
    return null;
  }
};

const PROJECTS = 'scene.projects';
const WORKSPACE = 'scene.workspace';

/**
 * The workspace's open project, record `scene.workspace/current` (issue 36
 * item 4): every process on the data folder, and every instance on a
 * shared store, follows it. A folder is kept relative to the data folder.
 */
function workspaceRecord(data: string, store: () => Store) {
  const keyOf = (dir: string) => {
    const rel = relative(data, dir);
    return rel.startsWith('..') || isAbsolute(rel) ? dir : rel;
  };
  const dirOf = (key: string) => (isAbsolute(key) ? key : resolve(data, key));
  return {
    keyOf,
    dirOf,
    async current(): Promise<string | null> {
      const found = await store().read((tx) =>
        tx.records.get<{ project: string }>(WORKSPACE, 'current'),
      );
      return found ? dirOf(found.value.project) : null;
    },
    async setCurrent(dir: string | null): Promise<void> {
      await store().transaction(async (tx) => {
        if (dir === null) await tx.records.delete(WORKSPACE, 'current');
        else await tx.records.put(WORKSPACE, 'current', { project: keyOf(dir) });
      });
    },
  };
}

/** Project folders on this machine's disk: what the workspace has always done. */
export function createLocalShelf(
  roots: ProjectRoots,
  storage: FolderStorage,
  data?: string,
  store?: () => Store,
): ProjectShelf {
  // Without a store (a session on its own, in tests) the open project is this process's.
  let mine: string | null = null;
  const workspace =
    data !== undefined && store
      ? workspaceRecord(data, store)
      : {
          current: async () => mine,
          setCurrent: async (dir: string | null) => {
            mine = dir;
          },
        };
  return {
    shared: false,
    read: async (dir) => readProjectFile(dir),
    init: async (dir, name) => initProject(dir, name),
    async creationFolder(dir, name) {
      if (roots.isRoot(dir)) return roots.freshFolder(name, dir);
      if (!existsSync(dir) || !statSync(dir).isDirectory()) return dir;
      if (readdirSync(dir).length === 0 || existsSync(join(dir, 'project.json'))) return dir;
      return roots.freshFolder(name, dir);
    },
    freshFolder: async (name) => roots.freshFolder(name),
    list: async () => roots.list().map(({ id, path }) => ({ id, path, name: nameAt(path) ?? id })),
    open: (dir, options) => openProject(dir, { ...options, storage }),
    findOperation: (dir, operation) => findOperation(dir, storage, operation),
    async remove(dir) {
      rmSync(dir, { recursive: true, force: true });
    },
    current: workspace.current,
    setCurrent: workspace.setCurrent,
  };
}

/** A project's record: its project file and the key its log and blobs are kept under. */
interface ProjectRecord extends ProjectFile {
  log: string;
}

/** Projects in the store, shared by every instance (scale-out). */
export function createSharedShelf(
  roots: ProjectRoots,
  storage: FolderStorage,
  data: string,
  store: () => Store,
): ProjectShelf {
  const workspace = workspaceRecord(data, store);
  const { keyOf, dirOf } = workspace;
  const record = async (dir: string) =>
    (await store().read((tx) => tx.records.get<ProjectRecord>(PROJECTS, keyOf(dir))))?.value ??
    null;
  const required = async (dir: string): Promise<ProjectRecord> => {
    const found = await record(dir);
    if (!found)
      throw new AirlockError(
        'notFound',
        `No project at ${dir} (no project.json); pass createName to create one there.`,
      );
    return found;
  };
  const keys = (found: ProjectRecord) => ({ log: `scene/${found.log}`, blobs: 'scene' });
  const fresh = async (name: string, parent: string) => {
    const slug = slugify(name);
    for (let n = 1; ; n++) {
      const candidate = join(parent, `${n === 1 ? slug : `${slug}-${n}`}${PROJECT_SUFFIX}`);
      if (!(await record(candidate))) return candidate;
    }
  };
  return {
    shared: true,
    read: async (dir) => {
      const { format, version, name, createdAt } = await required(dir);
      return { format, version, name, createdAt };
    },
    async init(dir, name) {
      const created = await store().transaction(
        async (tx) => {
          if (await tx.records.get(PROJECTS, keyOf(dir))) return false;
          const file: ProjectRecord = {
            format: 'airlock-scene',
            version: 1,
            name,
            createdAt: new Date().toISOString(),
            log: randomUUID(),
          };
          await tx.records.put(PROJECTS, keyOf(dir), file);
          return true;
        },
        { isolation: 'keyed' },
      );
      if (!created)
        throw new AirlockError(
          'malformedRequest',
          `Cannot create a project in ${dir}: a project is there already; choose a missing or empty folder.`,
          { field: 'path' },
        );
    },
    // Shared folders exist only as projects: a root gets a fresh folder, any other path is the project's.
    creationFolder: async (dir, name) => (roots.isRoot(dir) ? fresh(name, dir) : dir),
    freshFolder: (name) => fresh(name, roots.roots[0]!),
    async list() {
      const found = await store().read((tx) => tx.records.list<ProjectRecord>(PROJECTS));
      return found
        .map(({ key, value }) => ({
          id: projectIdOf(dirOf(key)),
          path: dirOf(key),
          name: value.name,
        }))
        .sort((a, b) => a.id.localeCompare(b.id));
    },
    async open(dir, options) {
      const found = await required(dir);
      return openSharedProject(dir, found, keys(found), { ...options, storage }, (blobs) =>
        createStoreExports(store(), blobs, found.log),
      );
    },
    async findOperation(dir, operation) {
      const found = await required(dir);
      const log = storage.historyLog<Scene, Op>(keys(found).log);
      try {
        const history = await openHistory<Scene, Op>({
          reducer: sceneReducer,
          initial: emptyScene(found.name, found.createdAt),
          log,
        });
        return history.epochOf(operation);
      } finally {
        log.close();
      }
    },
    // The log and the export records go first: a delete cut short leaves the
    // project listed (delete it again), never rows no project names. Blobs
    // stay: the blob store is shared by content hash with other projects and doors.
    async remove(dir) {
      const found = await record(dir);
      if (!found) return;
      await storage.removeLog(keys(found).log);
      await forgetStoreExports(store(), found.log);
      await store().transaction((tx) => tx.records.delete(PROJECTS, keyOf(dir)));
    },
    current: workspace.current,
    setCurrent: workspace.setCurrent,
  };
}
