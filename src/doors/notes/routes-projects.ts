/** The owner's notes projects over REST: create one by a unique name, list them. */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { validateInput } from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import { listProjects, PROJECTS } from './documents.js';
import { bad } from './rest.js';
import type { NotesRuntime } from './runtime.js';
import { charString } from './schemas.js';

const ProjectBody = z.object({ name: charString(1, 200) }).strict();

export function projectRoutes(rt: NotesRuntime): RestRoute[] {
  const store = () => rt.kernel().store;
  return [
    {
      method: 'POST',
      path: 'notes/projects',
      summary: 'Create a project {name}',
      handler: async ({ body }) => {
        const parsed = validateInput(ProjectBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { name } = parsed.value;
        const created = await store().transaction(async (tx) => {
          if ((await listProjects(tx)).some((p) => p.name === name)) return null;
          const project = { projectID: randomUUID(), name, createdAt: Date.now() };
          await tx.records.put(PROJECTS, project.projectID, project);
          return project;
        });
        if (!created) return bad(`A project named '${name}' exists already; choose another name.`);
        return { status: 201, body: { projectID: created.projectID, name: created.name } };
      },
    },
    {
      method: 'GET',
      path: 'notes/projects',
      summary: 'Projects',
      handler: async () => ({
        status: 200,
        body: {
          projects: (await store().read(listProjects)).map((p) => ({
            projectID: p.projectID,
            name: p.name,
            createdAt: p.createdAt,
          })),
        },
      }),
    },
  ];
}
