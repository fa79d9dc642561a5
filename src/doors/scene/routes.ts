/**
 * The scene door's REST API under /api/v1 (spec/scene.md "REST API"), on the
 * same session, history and job registry as the MCP tools. Errors are JSON
 * `{status, code, message}`.
 */
import { z } from 'zod';
import {
  AirlockError,
  connection,
  isBlobHash,
  uuidString,
  validateInput,
  type Failure,
  type Kernel,
} from '../../kernel/index.js';
import type { RestRequest, RestResponse, RestRoute } from '../../transport/surface.js';
import { infoOf, type EngineRegistry } from './engines/registry.js';
import { exportProject, ExportFormat, findCachedExport } from './exports.js';
import { bestImage, blobBytes, thumbnail } from './images.js';
import { parseMultipart } from './multipart.js';
import { deleteProject, importProject, listProjects } from './project-files.js';
import { projectIdOf, type SceneSession } from './session.js';
import { importOps, rowsFromCsv, textRows, TextsBody, toCsv } from './texts.js';
import { addPages } from './uploads.js';
import type { ToolNames } from './tools.js';

export interface RouteDeps {
  session: SceneSession;
  registry: EngineRegistry;
  kernel: () => Kernel;
  /** Tool names, for the REST writes that run as tool calls. */
  names: ToolNames;
  version: string;
}

/** REST callers share one connection identity for limits and audit. */
const REST_CONNECTION = connection('rest:scene', 'rest');

const ok = (body: unknown, status = 200): RestResponse => ({ status, body });

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = validateInput(schema, body ?? {});
  if (!r.ok) throw new AirlockError(r.code, r.message);
  return r.value;
}

const header = (req: RestRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const bytesOf = (body: unknown): Uint8Array => {
  if (body instanceof Uint8Array) return body;
  throw new AirlockError('malformedRequest', 'Send the file as the raw request body (not JSON).');
};

const ExportBody = z
  .object({ format: ExportFormat, pages: z.array(uuidString()).optional() })
  .strict();

/** Page images and project zips are larger than the server's default body cap. */
const UPLOAD_MAX_BYTES = 256 * 1024 * 1024;
const UPLOADS = new Set(['POST pages', 'POST projects/import']);

export function sceneRoutes(deps: RouteDeps): RestRoute[] {
  const { session, registry, names } = deps;
  const jobs = () => deps.kernel().jobs;

  /**
   * State changes over REST run as the matching MCP tool through the kernel
   * pipeline, so they are validated, limited and audited exactly alike.
   */
  const asTool = async (
    tool: string,
    args: unknown,
    status = 200,
  ): Promise<RestResponse | Failure> => {
    const outcome = await deps.kernel().call('scene', tool, args, { connection: REST_CONNECTION });
    return outcome.ok ? ok(outcome.value, status) : outcome;
  };

  // Failures, returned or thrown as AirlockError, are mapped by the HTTP layer.
  const route = (
    method: RestRoute['method'],
    path: string,
    summary: string,
    handler: RestRoute['handler'],
  ): RestRoute => ({
    method,
    ...(UPLOADS.has(`${method} ${path}`) ? { maxBodyBytes: UPLOAD_MAX_BYTES } : {}),
    path,
    summary,
    handler,
  });

  const file = (f: {
    bytes: Uint8Array;
    contentType: string;
    filename?: string;
  }): RestResponse => ({
    status: 200,
    raw: {
      bytes: f.bytes,
      contentType: f.contentType,
      ...(f.filename ? { filename: f.filename } : {}),
    },
  });

  return [
    route('GET', 'meta', 'Server and active project', async () => {
      const p = session.current();
      return ok({
        name: 'airlock',
        door: 'scene',
        version: deps.version,
        project: session.info(),
        epoch: p ? p.history.epoch : null,
        canUndo: p ? p.history.canUndo() : false,
        canRedo: p ? p.history.canRedo() : false,
        engines: [...registry.keys()],
      });
    }),
    route('GET', 'engines', 'Pipeline engines', async () =>
      ok({ engines: [...registry.values()].map(infoOf) }),
    ),
    route('GET', 'scene.json', 'The active scene: {epoch, scene}', async () => {
      const p = session.require();
      return ok({ epoch: p.history.epoch, scene: p.scene() });
    }),
    route(
      'GET',
      'blobs/{hash}',
      'A blob of the active project (or an export) by hash',
      async (req) => {
        const p = session.require();
        const hash = req.params.hash ?? '';
        if (!isBlobHash(hash))
          throw new AirlockError('malformedRequest', 'A blob hash is 64 lowercase hex characters.');
        const bytes = await p.blobs.get(hash);
        if (bytes) {
          const isPng = bytes[0] === 0x89 && bytes[1] === 0x50;
          const isJpeg = bytes[0] === 0xff && bytes[1] === 0xd8;
          return file({
            bytes,
            contentType: isPng ? 'image/png' : isJpeg ? 'image/jpeg' : 'application/octet-stream',
          });
        }
        const cached = findCachedExport(p, hash);
        if (cached) return file(cached);
        throw new AirlockError('notFound', `No blob ${hash} in the active project.`);
      },
    ),
    route(
      'GET',
      'pages/{id}/thumbnail',
      'PNG thumbnail of a page (at most 320 px)',
      async (req) => {
        const p = session.require();
        const page = p.history.state.pages.find((x) => x.id === req.params.id);
        if (!page) throw new AirlockError('notFound', `No page ${req.params.id}.`);
        const image = bestImage(page);
        if (!image) throw new AirlockError('notFound', `Page ${page.id} has no image.`);
        return file({
          bytes: await thumbnail(await blobBytes(p.blobs, image.image.blob)),
          contentType: 'image/png',
        });
      },
    ),
    route('POST', 'history/apply', 'Apply an Op: {op} → {epoch}', async (req) =>
      asTool(names.apply, req.body ?? {}),
    ),
    route('POST', 'history/undo', 'Undo → {epoch} (null at the boundary)', async () =>
      asTool(names.undo, {}),
    ),
    route('POST', 'history/redo', 'Redo → {epoch} (null at the boundary)', async () =>
      asTool(names.redo, {}),
    ),
    route('POST', 'pages', 'Upload page images (multipart/form-data), one batch', async (req) => {
      session.require();
      const parts = parseMultipart(bytesAsBuffer(req.body), header(req, 'content-type'));
      const files = parts
        .filter((part) => part.filename !== undefined || part.contentType?.startsWith('image/'))
        .map((part) => ({
          filename: part.filename ?? part.name,
          bytes: new Uint8Array(part.data),
        }));
      return ok(await addPages(session, files), 201);
    }),
    route('GET', 'projects', 'Projects in the project roots', async () =>
      ok(listProjects(session)),
    ),
    route('POST', 'projects', 'Create a project {name} and open it', async (req) => {
      const { name } = parse(z.object({ name: z.string().min(1).max(200) }).strict(), req.body);
      return ok(await session.create(name), 201);
    }),
    route('GET', 'projects/current', 'The active project', async () => ok(infoOrThrow(session))),
    route('PUT', 'projects/current', 'Open a project {id}', async (req) => {
      const { id } = parse(z.object({ id: z.string().min(1) }).strict(), req.body);
      const found = session.roots.list().find((p) => p.id === id);
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
        return file(await exportProject(session.require(), format, pages));
      },
    ),
    route(
      'GET',
      'projects/current/texts',
      'Texts and translations (format=json|csv)',
      async (req) => {
        const p = session.require();
        const rows = textRows(p.history.state);
        if (req.query.get('format') === 'csv')
          return file({
            bytes: new TextEncoder().encode(toCsv(rows)),
            contentType: 'text/csv; charset=utf-8',
            filename: `${projectIdOf(p.dir)}-texts.csv`,
          });
        return ok({ epoch: p.history.epoch, texts: rows });
      },
    ),
    route(
      'PUT',
      'projects/current/texts',
      'Import texts and translations as one batch (JSON or CSV)',
      async (req) => {
        const p = session.require();
        const csv =
          req.query.get('format') === 'csv' || /csv/i.test(header(req, 'content-type') ?? '');
        const rows = csv
          ? rowsFromCsv(Buffer.from(bytesOf(req.body)).toString('utf8'))
          : parse(TextsBody, req.body).texts;
        const ops = importOps(p.history.state, rows);
        if (!ops.length) return ok({ epoch: p.history.epoch, updated: 0 });
        const epoch = await session.applyOn(
          p,
          [{ batch: { ops, label: 'import texts' } }],
          'import texts',
        );
        return ok({ epoch, updated: ops.length });
      },
    ),
    route('POST', 'pipelines', 'Start a pipeline → {jobId}', async (req) =>
      asTool(names.startPipeline, req.body ?? {}, 202),
    ),
    route('GET', 'operations', 'Pipeline jobs, newest first', async () =>
      ok({ operations: await jobs().list({ door: 'scene' }) }),
    ),
    route('GET', 'operations/{id}', 'One pipeline job', async (req) => {
      const job = await jobs().get(req.params.id ?? '');
      if (!job) throw new AirlockError('notFound', `No operation ${req.params.id}.`);
      return ok(job);
    }),
    route('DELETE', 'operations/{id}', 'Cancel a pipeline job (404 when unknown)', async (req) => {
      const registry = jobs();
      const job = await registry.get(req.params.id ?? '');
      if (!job)
        throw new AirlockError(
          'notFound',
          `No operation ${req.params.id}; GET /api/v1/operations lists them.`,
        );
      const cancelled = await registry.cancel(job.id);
      return ok({ id: job.id, cancelled, status: cancelled ? 'cancelling' : job.status });
    }),
  ];
}

function bytesAsBuffer(body: unknown): Buffer {
  const bytes = bytesOf(body);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function infoOrThrow(session: SceneSession) {
  session.require();
  return session.info()!;
}
