/**
 * The kernel entrances of the scene door's REST writes that Koharu's MCP
 * reference has no tool for (issue 24: one entrance): creating, importing
 * and deleting a project, and uploading page images. They are `restOnly`
 * (never in `tools/list`, so the seed's tool list stays as it is) and run
 * only through their routes, which call them through the kernel — so the
 * owner's policy, `readOnly`, rates, limits and audit decide them exactly as
 * they decide an MCP call. Uploaded bytes reach them through `staging.ts`.
 */
import { z } from 'zod';
import {
  defineTool,
  failure,
  hex64String,
  utf8String,
  type AnyToolDef,
} from '../../../kernel/index.js';
import { deleteProject, importProject } from '../project/project-files.js';
import type { SceneSession } from '../session.js';
import type { Staging } from './staging.js';
import { addPages } from '../files/uploads.js';

export interface RestToolNames {
  createProject: string;
  deleteProject: string;
  uploadPages: string;
  importProject: string;
}

export const restToolNames = (prefix: string): RestToolNames => ({
  createProject: `${prefix}.create_project`,
  deleteProject: `${prefix}.delete_project`,
  uploadPages: `${prefix}.upload_pages`,
  importProject: `${prefix}.import_project`,
});

const StagedFile = z.object({ sha256: hex64String(), bytes: z.number().int().min(0) }).strict();
const ProjectInfo = z.object({ id: z.string(), name: z.string(), path: z.string() });

export function sceneRestTools(
  names: RestToolNames,
  session: SceneSession,
  staging: Staging,
): AnyToolDef[] {
  const create = defineTool({
    name: names.createProject,
    description:
      'Create a project {name} in the first project root and open it (POST /api/v1/projects).',
    input: z.object({ name: z.string().min(1).max(200) }).strict(),
    output: ProjectInfo,
    effect: 'write',
    restOnly: true,
    writes: true,
    policy: { targets: ({ name }) => [`create_project:${name}`] },
    handler: ({ name }) => session.create(name),
  });

  const remove = defineTool({
    name: names.deleteProject,
    description:
      'Delete a project folder with every page and its history (DELETE /api/v1/projects/{id}); the open project is closed first.',
    input: z.object({ id: z.string().min(1).max(4096) }).strict(),
    output: z.object({}).strict(),
    // Its folder, pages and history go; no undo brings them back.
    effect: 'destructive',
    restOnly: true,
    writes: true,
    policy: {
      targets: ({ id }) => [`delete_project:${id}`],
      check: async ({ id }) =>
        (await session.projects()).some((p) => p.id === id)
          ? null
          : failure('notFound', `No project '${id}'; GET /api/v1/projects lists them.`),
      preview: async ({ id }) => {
        const found = (await session.projects()).find((p) => p.id === id);
        return {
          summary: `delete project "${found?.name ?? id}" (${id}): its folder, every page and its history, with no undo`,
          project: { id, name: found?.name ?? null },
        };
      },
    },
    handler: async ({ id }) => {
      await deleteProject(session, id);
      return {};
    },
  });

  const upload = defineTool({
    name: names.uploadPages,
    description:
      'Add the images of a POST /api/v1/pages upload as pages, one undo step (each file named, with its SHA-256 and size).',
    input: z
      .object({
        files: z
          .array(StagedFile.extend({ name: utf8String(1, 1024) }).strict())
          .min(1)
          .max(10_000),
      })
      .strict(),
    effect: 'write',
    restOnly: true,
    writes: true,
    policy: {
      targets: ({ files }) => files.map((f) => `upload:${f.name}`),
      preview: ({ files }) => ({
        summary: `upload ${files.length} page image(s): ${files.map((f) => f.name).join(', ')}`,
      }),
    },
    handler: ({ files }) =>
      addPages(
        session,
        files.map((f) => ({ filename: f.name, bytes: staging.take(f, 'POST /api/v1/pages') })),
      ),
  });

  const importZip = defineTool({
    name: names.importProject,
    description:
      'Import the .khr zip of a POST /api/v1/projects/import as a new project and open it (its SHA-256 and size).',
    input: StagedFile,
    output: ProjectInfo,
    effect: 'write',
    restOnly: true,
    writes: true,
    policy: { targets: ({ sha256 }) => [`import_project:${sha256}`] },
    handler: (zip) => importProject(session, staging.take(zip, 'POST /api/v1/projects/import')),
  });

  return [create, remove, upload, importZip];
}
