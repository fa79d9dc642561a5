/**
 * Project folders as whole files: list them with their names, import a khr
 * zip as a new project, delete one. The REST routes call these; they only
 * map requests to them.
 */
import { readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AirlockError } from '../../kernel/index.js';
import { unpackKhr } from './khr-import.js';
import { isLockedElsewhere } from './project.js';
import type { ProjectInfo, SceneSession } from './session.js';
import { StoredFileError } from './stored-files.js';

export interface ProjectListing {
  projects: { id: string; path: string; name: string; current: boolean }[];
  current: ProjectInfo | null;
}

export function listProjects(session: SceneSession): ProjectListing {
  const current = session.info();
  return {
    projects: session.roots.list().map(({ id, path }) => ({
      id,
      path,
      name: nameAt(path) ?? id,
      current: current?.path === path,
    })),
    current,
  };
}

/**
 * Unpacks `zip` into a fresh folder named after the project inside, and opens
 * it. A zip that does not unpack into a project that opens is refused and its
 * folder removed; the project open before stays current.
 */
export async function importProject(session: SceneSession, zip: Uint8Array): Promise<ProjectInfo> {
  const target = session.roots.freshFolder(`import-${Date.now()}`);
  let name: string;
  try {
    name = unpackKhr(zip, target);
  } catch (error) {
    rmSync(target, { recursive: true, force: true });
    throw error;
  }
  const renamed = session.roots.freshFolder(name);
  renameSync(target, renamed);
  try {
    return await session.open(renamed);
  } catch (error) {
    if (session.info()?.path !== renamed) rmSync(renamed, { recursive: true, force: true });
    if (!(error instanceof StoredFileError)) throw error;
    throw new AirlockError(
      'malformedRequest',
      `The .khr cannot be imported: ${error.detail}. Send a .khr exported from a project that opens.`,
      { file: error.file, field: error.field },
    );
  }
}

/** Deletes a project folder; the active project is closed first, one open elsewhere is refused. */
export async function deleteProject(session: SceneSession, id: string): Promise<void> {
  const found = session.roots.list().find((p) => p.id === id);
  if (!found)
    throw new AirlockError('notFound', `No project '${id}'; GET /api/v1/projects lists them.`);
  if (session.info()?.path === found.path) await session.close();
  else if (isLockedElsewhere(found.path))
    throw new AirlockError(
      'unavailable',
      `Project '${found.id}' is open in another server; close it there first.`,
    );
  rmSync(found.path, { recursive: true, force: true });
}

function nameAt(path: string): string | null {
  try {
    return (
      (JSON.parse(readFileSync(join(path, 'project.json'), 'utf8')) as { name?: string }).name ??
      null
    );
  } catch {
    return null;
  }
}
