/**
 * Project folders as whole files: list them with their names, import a khr
 * zip as a new project, delete one. The REST routes call these; they only
 * map requests to them.
 */
import { renameSync, rmSync } from 'node:fs';
import { AirlockError } from '../../../kernel/index.js';
import { unpackKhr } from '../files/khr-import.js';
import type { ProjectInfo, SceneSession } from '../session.js';
import { StoredFileError } from './stored-files.js';

export interface ProjectListing {
  projects: { id: string; path: string; name: string; current: boolean }[];
  current: ProjectInfo | null;
}

export async function listProjects(session: SceneSession): Promise<ProjectListing> {
  const current = session.info();
  return {
    projects: (await session.projects()).map(({ id, path, name }) => ({
      id,
      path,
      name,
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
  if (session.shared)
    throw new AirlockError(
      'unavailable',
      'Importing a .khr is not offered in scale-out mode (projects live in the store); import it on an embedded workspace, or create the project and upload its pages.',
    );
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

/** Deletes a project; the active project is closed first, one open in another server is refused. */
export const deleteProject = (session: SceneSession, id: string): Promise<void> =>
  session.remove(id);
