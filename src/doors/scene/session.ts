/**
 * The workspace's one active project (spec/scene.md: "one live state: one
 * active project per workspace"), shared by the MCP tools, the REST routes
 * and the pipeline. Every change goes through the project's kernel history
 * and is published as `sceneChanged {epoch, label}`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AirlockError, type AirlockEvent, type FolderStorage } from '../../kernel/index.js';
import { labelOf, type Op } from './ops.js';
import {
  findOperation,
  initProject,
  openProject,
  readProjectFile,
  type Project,
} from './project.js';
import { PROJECT_SUFFIX, type ProjectRoots } from './roots.js';

/** The −32600 message the reference answers with (spec/scene.md "MCP tools"). */
export const NO_PROJECT_MESSAGE = 'invalid request: no project open';

export interface ProjectInfo {
  id: string;
  name: string;
  path: string;
}

export interface SceneSession {
  readonly roots: ProjectRoots;
  current(): Project | null;
  /** The open project, or `noProject`. */
  require(): Project;
  info(): ProjectInfo | null;
  /**
   * Opens the project at `path`; with `createName`, creates a project of
   * that name beneath `path` when it is a root or an existing folder that is
   * not a project, else in `path` itself (missing or empty). Closes the
   * previous project.
   */
  open(path: string, createName?: string): Promise<ProjectInfo>;
  /** Creates `<root>/<slug>.khrproj` and opens it. */
  create(name: string): Promise<ProjectInfo>;
  close(): Promise<boolean>;
  /** With an `operation` tag (operations.ts) the change is made once: a repeat answers its epoch. */
  apply(op: Op, operation?: string): Promise<number>;
  /** Applies ops as one undoable step on `project` (refused when it is no longer open). */
  applyOn(project: Project, ops: Op[], label: string): Promise<number>;
  undo(operation?: string): Promise<number | null>;
  redo(operation?: string): Promise<number | null>;
  /**
   * The epoch the change tagged `operation` produced in the project at `dir`
   * (the open one, or read from its files), or null; throws when that
   * project's history cannot be read.
   */
  operationEpoch(dir: string, operation: string): Promise<number | null>;
}

export interface SessionOptions {
  roots: ProjectRoots;
  storage: FolderStorage;
  publish(event: AirlockEvent): void;
  compactEvery?: number;
}

export const projectIdOf = (dir: string) => {
  const b = basename(dir);
  return b.endsWith(PROJECT_SUFFIX) ? b.slice(0, -PROJECT_SUFFIX.length) : b;
};

/**
 * Where `open_project {path, createName}` creates the project
 * (spec/scene.md): beneath `dir` when it is a root or an existing folder
 * that is not itself a project, as the reference does; in `dir` itself
 * when it is missing or empty. A folder that already is a project is
 * left to `initProject`, which refuses it.
 */
function creationFolder(roots: ProjectRoots, dir: string, name: string): string {
  if (roots.isRoot(dir)) return roots.freshFolder(name, dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return dir;
  if (readdirSync(dir).length === 0 || existsSync(join(dir, 'project.json'))) return dir;
  return roots.freshFolder(name, dir);
}

export function createSceneSession(options: SessionOptions): SceneSession {
  const { roots } = options;
  let project: Project | null = null;
  // Opening and closing are serialised so two opens never race for the slot.
  let lifecycle: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = lifecycle.then(fn, fn);
    lifecycle = next.catch(() => undefined);
    return next;
  };

  const require = (): Project => {
    if (!project) throw new AirlockError('noProject', NO_PROJECT_MESSAGE);
    return project;
  };
  const info = (): ProjectInfo | null =>
    project
      ? {
          id: projectIdOf(project.dir),
          name: project.history.state.project.name,
          path: project.dir,
        }
      : null;

  const openAt = async (dir: string): Promise<ProjectInfo> => {
    const next = await openProject(dir, {
      storage: options.storage,
      onChange: (change) => options.publish({ event: 'sceneChanged', ...change }),
      ...(options.compactEvery ? { compactEvery: options.compactEvery } : {}),
    });
    if (project) await project.close();
    project = next;
    return info()!;
  };

  return {
    roots,
    current: () => project,
    require,
    info,
    open: (path, createName) =>
      serial(async () => {
        if (createName === undefined) {
          const dir = roots.confine(path);
          if (project && project.dir === dir) return info()!;
          readProjectFile(dir);
          return openAt(dir);
        }
        const dir = creationFolder(roots, roots.confine(path, { allowRoot: true }), createName);
        initProject(dir, createName);
        return openAt(dir);
      }),
    create: (name) =>
      serial(async () => {
        const dir = roots.freshFolder(name);
        initProject(dir, name);
        return openAt(dir);
      }),
    close: () =>
      serial(async () => {
        if (!project) return false;
        const p = project;
        project = null;
        await p.close();
        return true;
      }),
    apply(op, operation) {
      const p = require();
      return p.history.apply([op], labelOf(op), operation);
    },
    applyOn(p, ops, label) {
      if (project !== p)
        throw new AirlockError(
          'noProject',
          'The project was closed while the pipeline ran; open it again and start the pipeline again.',
        );
      return p.history.apply(ops, label);
    },
    undo: (operation) => require().history.undo(operation),
    redo: (operation) => require().history.redo(operation),
    operationEpoch: (dir, operation) =>
      serial(async () =>
        project?.dir === dir
          ? project.history.epochOf(operation)
          : findOperation(dir, options.storage, operation),
      ),
  };
}

export const isProjectFolder = (dir: string) => existsSync(join(dir, 'project.json'));
