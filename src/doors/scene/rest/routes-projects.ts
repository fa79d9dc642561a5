/**
 * Projects over REST: list, create, open, close and delete the folders in the
 * project roots, and move a whole project in (a khr zip) or out (an export).
 */
import { z } from 'zod';
import { AirlockError, uuidString } from '../../../kernel/index.js';
import type { RestRoute } from '../../../transport/surface.js';
import { ExportFormat } from '../files/exports.js';
import { parseMultipart } from './multipart.js';
import { listProjects } from '../project/project-files.js';
import {
  asTool,
  bytesAsBuffer,
  bytesOf,
  callTool,
  file,
  header,
  ok,
  parse,
  route,
  type RouteDeps,
} from './rest.js';
import type { SceneSession } from '../session.js';

const ExportBody = z
  .object({ format: ExportFormat, pages: z.array(uuidString()).optional() })
  .strict();

const OpenBody = z
  .object({
    id: z
      .string()
      .min(1)
      .refine((id) => !id.includes('\0'), {
        message:
          'contains a NUL byte (\\u0000), which no project id can hold; GET /api/v1/projects lists the ids',
      }),
  })
  .strict();

export function projectRoutes(deps: RouteDeps): RestRoute[] {
  const { session, names, restNames, staging } = deps;
  return [
    route('GET', 'projects', 'Projects in the project roots', async () =>
      ok(await listProjects(session)),
    ),
    route('POST', 'projects', 'Create a project {name} and open it', async (req) => {
      const { name } = parse(z.object({ name: z.string().min(1).max(200) }).strict(), req.body);
      return asTool(deps, req, restNames.createProject, { name }, 201);
    }),
    route('GET', 'projects/current', 'The active project', async () => ok(infoOrThrow(session))),
    route('PUT', 'projects/current', 'Open a project {id}', async (req) => {
      const { id } = parse(OpenBody, req.body);
      const found = (await session.projects()).find((p) => p.id === id);
      if (!found)
        throw new AirlockError('notFound', `No project '${id}'; GET /api/v1/projects lists them.`);
      // Koharu's open_project, on the project's path.
      const opened = await callTool(deps, req, names.openProject, { path: found.path });
      return opened.ok ? ok(infoOrThrow(session)) : opened;
    }),
    route('DELETE', 'projects/current', 'Close the active project', async (req) => {
      const closed = await callTool(deps, req, names.closeProject, {});
      return closed.ok ? { status: 204 } : closed;
    }),
    route(
      'DELETE',
      'projects/{id}',
      'Delete a project folder (destructive: an agent waits for the owner unless the policy says otherwise)',
      async (req) => {
        const deleted = await callTool(deps, req, restNames.deleteProject, {
          id: req.params.id ?? '',
        });
        return deleted.ok ? { status: 204 } : deleted;
      },
    ),
    route(
      'POST',
      'projects/import',
      'Import a khr zip as a new project and open it',
      async (req) => {
        // The zip as the raw body, or as the first file of a multipart form.
        const type = header(req, 'content-type') ?? '';
        const zip = /multipart\/form-data/i.test(type)
          ? new Uint8Array(
              parseMultipart(bytesAsBuffer(req.body), type).find((p) => p.data.length)?.data ?? [],
            )
          : bytesOf(req.body);
        return staging.hold([zip], ([ref]) => asTool(deps, req, restNames.importProject, ref, 201));
      },
    ),
    route(
      'POST',
      'projects/current/export',
      'Export {format: khr|rendered|inpainted|pdf, pages?}',
      async (req) => {
        const args = parse(ExportBody, req.body);
        // Koharu's export keeps the file; the answer is its bytes.
        const exported = await callTool(deps, req, names.export, args);
        if (!exported.ok) return exported;
        const { url } = exported.value as { url: string };
        const kept = await session.require().exports.find(url.slice(url.lastIndexOf('/') + 1));
        if (!kept)
          throw new AirlockError(
            'notFound',
            'The export was closed with its project before it could be sent; open the project and export again.',
          );
        return file(kept);
      },
    ),
  ];
}

function infoOrThrow(session: SceneSession) {
  session.require();
  return session.info()!;
}
