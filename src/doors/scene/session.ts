/**
 * The workspace's one active project (spec/scene.md: "one live state: one
 * active project per workspace"), shared by the MCP tools, the REST routes
 * and the pipeline, and by every process on the data folder (issue 36 item
 * 4): the open project is a record in the store that every call follows
 * (`sync`), and the project's history log is one log all of them append to.
 * Every change goes through the project's kernel history and is published
 * as `sceneChanged {epoch, label}`; so are opening and closing. With a local
 * event bus (embedded) `watch` polls, so changes another process made are
 * published here too; on a shared store the event bus carries them.
 */
import { AirlockError, type AirlockEvent } from '../../kernel/index.js';
import { labelOf, type Op } from './model/ops.js';
import type { Project } from './project/project.js';
import type { ProjectRoots } from './project/roots.js';
import { projectIdOf, type ProjectShelf, type ShelvedProject } from './project/shelf.js';

export { projectIdOf };

/** The −32600 message the reference answers with (spec/scene.md "MCP tools"). */
export const NO_PROJECT_MESSAGE = 'invalid request: no project open';

export interface ProjectInfo {
  id: string;
  name: string;
  path: string;
}

export interface SceneSession {
  readonly roots: ProjectRoots;
  /** True in scale-out: projects live in the store and every instance serves the same one. */
  readonly shared: boolean;
  /** Leaves the open project open for the others (an instance that stops). */
  release(): Promise<void>;
  /**
   * Follows the other processes every `everyMs` (local events only: a shared
   * bus carries their events); returns the stop.
   */
  watch(everyMs: number, onError: (error: unknown) => void): () => void;
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
  /**
   * Undoes (redoes) the last step. With `seen`, only on that project at that
   * epoch — the state the owner's policy judged the call on — else
   * `versionConflict`, so a call never reverts a step nobody judged.
   */
  undo(operation?: string, seen?: SeenHistory): Promise<number | null>;
  redo(operation?: string, seen?: SeenHistory): Promise<number | null>;
  /** The projects on the shelf, by id. */
  projects(): Promise<ShelvedProject[]>;
  /** Deletes a project (closing it first when it is the open one). */
  remove(id: string): Promise<void>;
  /** Catches up with what other processes and instances changed: the open project and its history. */
  sync(): Promise<void>;
  /** Applies ops as one undoable step tagged `operation` (a repeat answers its epoch); see `applyOn`. */
  applyTagged(project: Project, ops: Op[], label: string, operation: string): Promise<number>;
  /**
   * The epoch the change tagged `operation` produced in the project at `dir`
   * (the open one, or read from its files), or null; throws when that
   * project's history cannot be read.
   */
  operationEpoch(dir: string, operation: string): Promise<number | null>;
}

export interface SessionOptions {
  roots: ProjectRoots;
  shelf: ProjectShelf;
  publish(event: AirlockEvent): void;
  compactEvery?: number;
}

export function createSceneSession(options: SessionOptions): SceneSession {
  const { roots, shelf } = options;
  const slot = createProjectSlot(options);
  const { serial, require, info } = slot;

  /** The open project, when it is still the one the call was judged on. */
  const judged = (seen: SeenHistory | undefined): Project => {
    const open = require();
    if (seen && seen.project !== open)
      throw new AirlockError(
        'versionConflict',
        'Another project was opened since this call was decided; call it again to act on the open one.',
      );
    return open;
  };
  /** Closes the open project for the whole workspace. */
  const closeForAll = async () => {
    await shelf.setCurrent(null);
    await slot.closeHere();
    slot.closed();
  };

  return {
    roots,
    shared: shelf.shared,
    release: () => serial(slot.closeHere),
    watch: (everyMs, onError) =>
      slot.local ? pollEvery(everyMs, slot.sync, onError) : () => undefined,
    current: slot.current,
    require,
    info,
    open: (path, createName) =>
      serial(async () => {
        if (createName === undefined) {
          const dir = roots.confine(path);
          if (slot.current()?.dir === dir) return info()!;
          await shelf.read(dir);
          return slot.openAt(dir);
        }
        const dir = await shelf.creationFolder(
          roots.confine(path, { allowRoot: true }),
          createName,
        );
        await shelf.init(dir, createName);
        return slot.openAt(dir);
      }),
    create: (name) =>
      serial(async () => {
        const dir = await shelf.freshFolder(name);
        await shelf.init(dir, name);
        return slot.openAt(dir);
      }),
    close: () =>
      serial(async () => {
        if (!slot.current()) return false;
        await closeForAll();
        return true;
      }),
    projects: () => shelf.list(),
    remove: (id) =>
      serial(async () => {
        const found = (await shelf.list()).find((p) => p.id === id);
        if (!found)
          throw new AirlockError(
            'notFound',
            `No project '${id}'; GET /api/v1/projects lists them.`,
          );
        if (slot.current()?.dir === found.path) {
          await closeForAll();
        } else if ((await shelf.current()) === found.path) {
          await shelf.setCurrent(null);
        }
        await shelf.remove(found.path, found.id);
      }),
    sync: slot.sync,
    apply(op, operation) {
      const p = require();
      return p.history.apply([op], labelOf(op), operation);
    },
    applyOn(p, ops, label) {
      if (slot.current() !== p) throw closedWhileRunning();
      return p.history.apply(ops, label);
    },
    applyTagged(p, ops, label, operation) {
      if (slot.current() !== p) throw closedWhileRunning();
      return p.history.apply(ops, label, operation);
    },
    undo: (operation, seen) => judged(seen).history.undo(operation, seen?.epoch),
    redo: (operation, seen) => judged(seen).history.redo(operation, seen?.epoch),
    operationEpoch: (dir, operation) =>
      serial(async () => {
        const project = slot.current();
        if (project?.dir !== dir) return shelf.findOperation(dir, operation);
        await project.history.sync();
        return project.history.epochOf(operation);
      }),
  };
}

/** This process's one open project: opening, closing and following the workspace's choice. */
interface ProjectSlot {
  /** False on a shared store, whose bus carries the other processes' events. */
  readonly local: boolean;
  current(): Project | null;
  require(): Project;
  info(): ProjectInfo | null;
  /** Opening and closing are serialised so two opens never race for the slot. */
  serial<T>(fn: () => Promise<T>): Promise<T>;
  /** Opens the project at `dir` here, closes the previous one, and makes it the workspace's. */
  openAt(dir: string): Promise<ProjectInfo>;
  /** Closes the open project in this process only. */
  closeHere(): Promise<void>;
  /** Publishes that the project was closed. */
  closed(): void;
  /** Catches up with the workspace's open project and its history. */
  sync(): Promise<void>;
}

function createProjectSlot(options: SessionOptions): ProjectSlot {
  const { shelf } = options;
  let project: Project | null = null;
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

  const publish = (change: { epoch: number; label: string }) =>
    options.publish({ event: 'sceneChanged', ...change });
  // A shared store's bus carries the others' events; a local bus hears them only from here.
  const local = !shelf.shared;
  const openHere = (dir: string) =>
    shelf.open(dir, {
      onChange: publish,
      ...(local ? { onCatchUp: publish } : {}),
      ...(options.compactEvery ? { compactEvery: options.compactEvery } : {}),
    });
  const opened = () => publish({ epoch: project!.history.epoch, label: `open ${info()!.name}` });
  const closed = () => publish({ epoch: 0, label: 'close project' });
  const closeHere = async () => {
    const p = project;
    project = null;
    await p?.close();
  };
  const openAt = async (dir: string): Promise<ProjectInfo> => {
    const next = await openHere(dir);
    if (project) await project.close();
    project = next;
    // Every process and instance on the workspace serves this project from now on.
    await shelf.setCurrent(dir);
    opened();
    return info()!;
  };

  /** Follows the workspace's open project: another process opened, switched or closed it. */
  const follow = () =>
    serial(async () => {
      const wanted = await shelf.current();
      if (wanted === (project?.dir ?? null)) return;
      await closeHere();
      if (wanted !== null) project = await openHere(wanted);
      if (!local) return;
      if (project) opened();
      else closed();
    });

  const sync = async () => {
    await follow();
    await project?.history.sync();
  };

  return { local, current: () => project, require, info, serial, openAt, closeHere, closed, sync };
}

/** Runs `sync` every `everyMs`, never two at once; returns the stop. */
function pollEvery(
  everyMs: number,
  sync: () => Promise<void>,
  onError: (error: unknown) => void,
): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    sync()
      .catch(onError)
      .finally(() => {
        busy = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The project and history epoch a call was judged on (tools.ts: undo and redo). */
export interface SeenHistory {
  project: Project;
  epoch: number;
}

const closedWhileRunning = () =>
  new AirlockError(
    'noProject',
    'The project was closed while the pipeline ran; open it again and start the pipeline again.',
  );
