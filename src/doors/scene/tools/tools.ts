/**
 * The scene door's MCP tools (spec/scene.md "MCP tools"): the six reference
 * tools with their exact names and shapes, plus the read tools that spare
 * agents raw HTTP. A tool that needs a project raises `noProject`, which the
 * presenter shows as JSON-RPC −32600 `invalid request: no project open`.
 */
import { z } from 'zod';
import {
  AirlockError,
  defineTool,
  failure,
  JobSchema,
  utf8String,
  uuidString,
  type AnyToolDef,
} from '../../../kernel/index.js';
import { ARTIFACTS, infoOf, type EngineRegistry } from '../engines/registry.js';
import { exportProject, ExportFormat } from '../files/exports.js';
import { Scene } from '../model/model.js';
import { OpSchema } from '../model/ops.js';
import { historyMoveTool } from '../history/history-tools.js';
import {
  observedPages,
  opEffect,
  opSummary,
  opTargets,
  pageSubject,
  removalsOf,
} from '../policy/op-policy.js';
import { opsPreviewDetails } from '../policy/op-thumbnails.js';
import {
  callTag,
  OPERATION_ID_HELP,
  OperationID,
  operationTag,
  sceneJournal,
} from '../history/operations.js';
import { PipelineInput, startPipeline } from '../pipeline.js';
import { ImportPagesInput, importPages } from '../files/import-pages.js';
import { GetSceneInput, GetSceneView, sceneView } from './scene-view.js';
import type { SceneSession } from '../session.js';
import { applyOp } from '../model/reducer.js';

export interface ToolNames {
  apply: string;
  undo: string;
  redo: string;
  openProject: string;
  closeProject: string;
  startPipeline: string;
  getScene: string;
  listEngines: string;
  getJob: string;
  cancelJob: string;
  export: string;
  importPages: string;
}

export const toolNames = (prefix: string): ToolNames => ({
  apply: `${prefix}.apply`,
  undo: `${prefix}.undo`,
  redo: `${prefix}.redo`,
  openProject: `${prefix}.open_project`,
  closeProject: `${prefix}.close_project`,
  startPipeline: `${prefix}.start_pipeline`,
  getScene: `${prefix}.get_scene`,
  listEngines: `${prefix}.list_engines`,
  getJob: `${prefix}.get_job`,
  cancelJob: `${prefix}.cancel_job`,
  export: `${prefix}.export`,
  importPages: `${prefix}.import_pages`,
});

const Epoch = z.object({ epoch: z.number().int() });
const Empty = z.object({}).strict();
export const EngineInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  needs: z.array(z.enum(ARTIFACTS)),
  produces: z.array(z.enum(ARTIFACTS)),
  languages: z.array(z.string()).optional(),
});
export const SceneView = z.object({ epoch: z.number().int(), scene: Scene });
export const ExportResult = z.object({
  uri: z.string(),
  url: z.string(),
  name: z.string(),
  mimeType: z.string(),
  bytes: z.number().int(),
});

/**
 * Effects (authority.md §3): apply, undo and redo by the ops they apply
 * (op-policy.ts), the others fixed. Koharu publishes no hints for most of
 * its tools and only `destructiveHint` for apply; `statedHints` keeps those
 * descriptors as they were.
 */
/** Koharu's reference tools publish no readOnlyHint/destructiveHint. */
const NO_HINTS = { statedHints: [] } as const;

export function sceneTools(
  names: ToolNames,
  session: SceneSession,
  registry: EngineRegistry,
): AnyToolDef[] {
  return [
    applyTool(names, session),
    historyMoveTool('undo', names.undo, session),
    historyMoveTool('redo', names.redo, session),
    openProjectTool(names, session),
    closeProjectTool(names, session),
    startPipelineTool(names, session, registry),
    importPagesTool(names, session),
    getSceneTool(names, session),
    listEnginesTool(names, registry),
    getJobTool(names),
    cancelJobTool(names),
    exportTool(names, session),
  ];
}

function applyTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.apply,
    description: `Apply one op as one undo step; returns {epoch}. op is one of (PascalCase tags work; prev* ignored): addPage {page:{id,name,width,height,nodes}, at?}, removePage {id}, updatePage {id, patch}, reorderPages {order}, addNode {page, node, at?}, removeNode {page, id}, updateNode {page, id, patch:{transform?, visible?, data?:{text:{translation?,…}}}}, reorderNodes {page, order}, updateProjectMeta {patch:{name?, style?}}, batch {ops, label} (all or nothing). node: {id, transform:{x,y,width,height,rotationDeg}, visible, kind:{text|image|mask:{…}}}, as get_scene shows. ${OPERATION_ID_HELP}`,
    input: z.object({ op: OpSchema, operationID: OperationID }).strict(),
    schemaDepth: 2,
    output: Epoch,
    effect: ({ op }) => opEffect(op),
    publishedEffect: 'destructive',
    statedHints: ['destructiveHint'],
    policy: {
      targets: ({ op }) => opTargets(op),
      targetsAre: 'parts',
      // A dry run on the live scene: the owner is never asked about an op that cannot apply,
      // nor about one while no project is open (it would answer noProject after the approval).
      check: async (input, connection) => {
        // Scale-out: the dry run sees what every instance sees.
        await session.sync();
        // A retry of an op already applied is the journal's to answer, not to dry-run again.
        const current = session.current();
        const tag = callTag(names.apply, input, connection);
        if (current && tag !== null && current.history.epochOf(tag) !== null) return null;
        const { op } = input;
        try {
          applyOp(session.require().scene(), op);
          return null;
        } catch (error) {
          if (error instanceof AirlockError) return error.toFailure();
          throw error;
        }
      },
      observes: ({ op }) => {
        const scene = session.current()?.scene();
        return scene ? observedPages(scene, [op]) : undefined;
      },
      subject: ({ op }) => {
        const scene = session.current()?.scene();
        return scene ? pageSubject(scene, [op]) : null;
      },
      preview: async ({ op }) => {
        const project = session.current();
        const scene = project?.scene();
        const removes = scene ? removalsOf(scene, [op]) : [];
        const details = scene ? await opsPreviewDetails(scene, [op], project!.blobs) : null;
        const single = details && !('batch' in op) ? details.changes : null;
        return {
          summary: `${scene?.project.name ?? 'scene'}: ${opSummary(op)}${single ? ` — ${single}` : ''}`,
          ...(details ?? {}),
          ...(removes.length > 0 ? { removes } : {}),
          op,
        };
      },
    },
    journal: sceneJournal(session),
    writes: true,
    handler: async ({ op }, ctx) => {
      const { operation } = ctx;
      if (!operation) return { epoch: await session.apply(op) };
      // The history append is the write; the receipt commits right after it (operations.ts).
      return ctx.write(async () => ({ epoch: await session.apply(op, operationTag(operation)) }));
    },
  });
}

function openProjectTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.openProject,
    description: `Open the project at path, or create one named createName beneath path (a non-project folder) or in it (missing or empty). Paths lie in the project roots (${session.roots.roots.join(', ')}); relative ones resolve against the first.`,
    input: z
      .object({ path: utf8String(1, 4096), createName: utf8String(1, 200).optional() })
      .strict(),
    output: z.object({ name: z.string(), path: z.string() }),
    // Opens, or with createName creates, a project folder.
    effect: 'write',
    ...NO_HINTS,
    writes: true,
    handler: async ({ path, createName }) => {
      const info = await session.open(path, createName);
      return { name: info.name, path: info.path };
    },
  });
}

function closeProjectTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.closeProject,
    description: 'Close the active project; tools that need one fail until a project is opened.',
    input: Empty,
    output: Empty,
    // Every op is already in the project's fsynced log: closing loses nothing, so not destructive.
    effect: 'write',
    ...NO_HINTS,
    handler: async () => {
      session.require();
      await session.close();
      return {};
    },
  });
}

function startPipelineTool(names: ToolNames, session: SceneSession, registry: EngineRegistry) {
  return defineTool({
    name: names.startPipeline,
    description:
      'Start a pipeline in the background; returns {jobId}. steps: engine ids (list_engines), run in dependency order over pages (default all), one undo step per engine and page. Follow it with get_job.',
    input: PipelineInput,
    output: z.object({ jobId: z.string() }),
    // Engines write one undoable batch per page.
    effect: 'write',
    ...NO_HINTS,
    policy: {
      // One target per step, like a batch's op kinds: a rule on `pipeline:fill` sees every pipeline that fills.
      targets: ({ steps }) => steps.map((step) => `pipeline:${step}`),
      targetsAre: 'parts',
      preview: ({ steps, pages }) => ({
        summary: `pipeline ${steps.join(' → ')} over ${pages ? `${pages.length} page(s)` : 'every page'}`,
        steps,
        pages: pages ?? 'all',
      }),
    },
    handler: async (input, ctx) => startPipeline({ session, registry, jobs: ctx.jobs }, input),
  });
}

function getSceneTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.getScene,
    description:
      'The active scene (pages, nodes, texts, translations; images as blob hashes). pages: only those; fields "text": text and translations only. A large scene comes in parts: pass nextCursor back as cursor.',
    input: GetSceneInput,
    output: GetSceneView,
    effect: 'read',
    handler: async (input, ctx) => {
      const project = session.require();
      return sceneView(project.scene(), project.history.epoch, input, ctx.resultChars);
    },
  });
}

function listEnginesTool(names: ToolNames, registry: EngineRegistry) {
  return defineTool({
    name: names.listEngines,
    description: 'The pipeline engines, what each needs and produces.',
    input: Empty,
    output: z.object({ engines: z.array(EngineInfoSchema) }),
    effect: 'read',
    handler: async () => ({ engines: [...registry.values()].map(infoOf) }),
  });
}

function getJobTool(names: ToolNames) {
  return defineTool({
    name: names.getJob,
    description: 'A job: status, progress, warnings, error.',
    input: z.object({ jobId: uuidString() }).strict(),
    output: JobSchema,
    effect: 'read',
    handler: async ({ jobId }, ctx) =>
      (await ctx.jobs.get(jobId)) ??
      failure('notFound', `No job ${jobId}; start_pipeline returns the id to use.`),
  });
}

function cancelJobTool(names: ToolNames) {
  return defineTool({
    name: names.cancelJob,
    description: 'Cancel a job; it stops within one page of work.',
    input: z.object({ jobId: uuidString() }).strict(),
    output: z.object({ jobId: z.string(), cancelled: z.boolean(), status: z.string() }),
    effect: 'write',
    ...NO_HINTS,
    handler: async ({ jobId }, ctx) => {
      const job = await ctx.jobs.get(jobId);
      if (!job)
        return failure('notFound', `No job ${jobId}; start_pipeline returns the id to use.`);
      const cancelled = await ctx.jobs.cancel(jobId);
      return { jobId, cancelled, status: cancelled ? 'cancelling' : job.status };
    },
  });
}

function exportTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.export,
    description:
      'Export the active project as khr (zip), rendered or inpainted PNGs, or pdf; returns a link to the file.',
    input: z
      .object({ format: ExportFormat, pages: z.array(uuidString()).max(10_000).optional() })
      .strict(),
    output: ExportResult,
    // Writes a file (exports/ in the project folder, or the store in
    // scale-out; served at url), never the scene itself: a write, so it is audited and the owner's policy sees it.
    effect: 'write',
    ...NO_HINTS,
    policy: {
      targets: ({ format }) => [`export:${format}`],
      preview: ({ format, pages }) => ({
        summary: `export ${format} of ${pages ? `${pages.length} page(s)` : 'every page'}`,
      }),
    },
    handler: async ({ format, pages }) => {
      const project = session.require();
      const file = await exportProject(project, format, pages, session.shared);
      const { hash, uri } = await project.exports.keep(file);
      return {
        uri,
        url: `/api/v1/blobs/${hash}`,
        name: file.filename,
        mimeType: file.contentType,
        bytes: file.bytes.byteLength,
      };
    },
  });
}

function importPagesTool(names: ToolNames, session: SceneSession) {
  return defineTool({
    name: names.importPages,
    description:
      'Add page images to the active project as one undo step: paths (inside the project roots), urls (loopback http(s) or file:) or base64 [{name, data}].',
    input: ImportPagesInput,
    output: z.object({
      epoch: z.number().int(),
      pages: z.array(
        z.object({ id: z.string(), name: z.string(), width: z.number(), height: z.number() }),
      ),
    }),
    effect: 'write',
    ...NO_HINTS,
    writes: true,
    policy: {
      targets: ({ paths = [], urls = [], base64 = [] }) => [
        ...paths.map((p) => `import:${p}`),
        ...urls.map((u) => `import:${u}`),
        ...base64.map((b) => `import:${b.name}`),
      ],
      preview: ({ paths = [], urls = [], base64 = [] }) => ({
        summary: `import ${paths.length + urls.length + base64.length} page image(s)`,
        paths,
        urls,
        base64: base64.map((b) => b.name),
      }),
    },
    handler: (input) => importPages(session, input),
  });
}
