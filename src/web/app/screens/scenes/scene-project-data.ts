/** What the scenes overview reads from the scene door's REST API (spec/scene.md): meta, projects, engines, the open scene. */
import type { Scene } from '../../../../doors/scene/model/model.js';
import { get } from '../../api.js';
import type { HistoryMeta } from './scene-history.js';

export interface ProjectInfo {
  id?: string;
  name: string;
  path: string;
}
export interface ProjectEntry extends ProjectInfo {
  id: string;
  current: boolean;
}
export interface Meta extends HistoryMeta {
  project: ProjectInfo | null;
}
export interface Engine {
  id: string;
  name: string;
  needs: string[];
  produces: string[];
}

export interface Overview {
  meta: Meta;
  projects: ProjectEntry[];
  /** Null when not asked for: the engine list does not change while the server runs. */
  engines: Engine[] | null;
}

/** Meta, the project list and (once) the engines, fetched together. */
export async function fetchOverview(withEngines: boolean): Promise<Overview> {
  const [meta, list, eng] = await Promise.all([
    get<Meta>('meta'),
    get<{ projects: ProjectEntry[] }>('projects'),
    withEngines ? get<{ engines: Engine[] }>('engines') : Promise.resolve(null),
  ]);
  return { meta, projects: list.projects, engines: eng?.engines ?? null };
}

/** The open project's scene. */
export async function fetchScene(): Promise<Scene> {
  const { scene } = await get<{ epoch: number; scene: Scene }>('scene.json');
  return scene;
}
