/**
 * Projects over REST: list, create, open, close and delete the folders in the
 * project roots, and move a whole project in (a khr zip) or out (an export).
 */
import { z } from 'zod';
import { AirlockError, uuidString } from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import { exportProject, ExportFormat } from './exports.js';
import { parseMultipart } from './multipart.js';
import { deleteProject, importProject, listProjects } from './project-files.js';
import { bytesAsBuffer, bytesOf, file, header, ok, parse, route, type RouteDeps } from './rest.js';
import type { SceneSession } from './session.js';

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

export function projectRoutes({ session }: RouteDeps): RestRoute[] {
  return [
    route('GET', 'projects', 'Projects in the project roots', async () =>
      ok(await listProjects(session)),
    ),
    route('POST', 'projects', 'Create a project {name} and open it', async (req) => {
      const { name } = parse(z.object({ name: z.string().min(1).max(200) }).strict(), req.body);
      return ok(await session.create(name), 201);
    }),
    route('GET', 'projects/current', 'The active project', async () => ok(infoOrThrow(session))),
    route('PUT', 'projects/current', 'Open a project {id}', async (req) => {
      const { id } = parse(OpenBody, req.body);
      const found = (await session.projects()).find((p) => p.id === id);
      if (!found)
        throw new AirlockError('notFound', `No project '${id}'; GET /api/v1/projects lists them.`);
      return ok(await session.open(found.path));
    }),
    route('DELETE', 'projects/current', 'Close the active project', async () => {
      session.require();
      await session.close();
      return { status: 204 };
    }),
    route('DELETE', 'projects/{id}', 'Delete a project folder', async (req) => {
      await deleteProject(session, req.params.id ?? '');
      return { status: 204 };
    }),
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
        return ok(await importProject(session, zip), 201);
      },
    ),
    route(
      'POST',
      'projects/current/export',
      'Export {format: khr|rendered|inpainted|pdf, pages?}',
      async (req) => {
        const { format, pages } = parse(ExportBody, req.body);
        return file(await exportProject(session.require(), format, pages, session.shared));
      },
    ),
  ];
}

function infoOrThrow(session: SceneSession) {
  session.require();
  return session.info()!;
}
