/**
 * Door `scene` (spec/scene.md): a Koharu-compatible document model — projects
 * on disk, a scene of pages and nodes edited by ops with undo/redo through
 * the kernel history, background pipelines of engines on the kernel job
 * registry, a REST API and events. One active project per workspace, shared
 * by MCP, REST and the web UI.
 *
 * Config file section `scene` (all optional):
 * `{projectRoots: [dir…], prefix: 'koharu', llm: {baseUrl, apiKey, model}}`;
 * the llm settings fall back to AIRLOCK_LLM_BASE_URL / AIRLOCK_LLM_API_KEY /
 * AIRLOCK_LLM_MODEL (then OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL).
 */
import { join, resolve } from 'node:path';
import type { DoorContext } from '../context.js';
import type { RestRoute, ServedDoor } from '../../transport/surface.js';
import { AIRLOCK_VERSION, type AnyToolDef, type Kernel } from '../../kernel/index.js';
import { createDbnetEngine } from './engines/dbnet.js';
import { createFillEngine } from './engines/fill.js';
import { createLlmEngine, type LlmConfig } from './engines/llm.js';
import type { Engine } from './engines/registry.js';
import { createRendererEngine } from './engines/renderer.js';
import { createTesseractEngine } from './engines/tesseract.js';
import { resolveSceneOperation } from './history/operations.js';
import { resumePipeline } from './pipeline.js';
import { scenePresenter } from './tools/presenter.js';
import { createProjectRoots } from './project/roots.js';
import { sceneRoutes } from './rest/routes.js';
import { createSceneSession, type SceneSession } from './session.js';
import { createLocalShelf, createSharedShelf } from './project/shelf.js';
import { sceneTools, toolNames } from './tools/tools.js';
import { restToolNames, sceneRestTools } from './rest/tools-rest.js';
import { createStaging } from './rest/staging.js';
import { SceneConfig } from './config.js';
import { OP_KINDS } from './model/ops.js';

export { SceneConfig } from './config.js';

export async function createSceneDoors(ctx: DoorContext): Promise<ServedDoor[]> {
  const parsed = SceneConfig.safeParse(ctx.config.scene ?? {});
  if (!parsed.success)
    throw new Error(`config file: scene: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const config = parsed.data;
  const roots = createProjectRoots(
    (config.projectRoots ?? [join(ctx.data, 'projects')]).map((r) => resolve(ctx.data, r)),
  );
  let kernel: Kernel | undefined;
  const started = (): Kernel => {
    if (!kernel) throw new Error('the scene door is not started');
    return kernel;
  };
  const shelf = ctx.storage.shared
    ? createSharedShelf(roots, ctx.storage, ctx.data, () => started().store)
    : createLocalShelf(roots, ctx.storage, ctx.data, () => started().store);
  const session = createSceneSession({
    roots,
    shelf,
    publish: (event) => kernel?.events.publish(event),
    ...(config.compactEvery ? { compactEvery: config.compactEvery } : {}),
  });
  const env = ctx.env;
  const llm = (): LlmConfig => ({
    baseUrl: config.llm?.baseUrl ?? env.AIRLOCK_LLM_BASE_URL ?? env.OPENAI_BASE_URL,
    apiKey: config.llm?.apiKey ?? env.AIRLOCK_LLM_API_KEY ?? env.OPENAI_API_KEY,
    model: config.llm?.model ?? env.AIRLOCK_LLM_MODEL ?? env.OPENAI_MODEL,
    timeoutMs: config.llm?.timeoutMs,
  });
  const engines: Engine[] = [
    createTesseractEngine(),
    createDbnetEngine(),
    createLlmEngine(llm),
    createFillEngine(),
    createRendererEngine(),
  ];
  const registry = new Map(engines.map((e) => [e.id, e]));
  const names = toolNames(config.prefix ?? 'koharu');
  const restNames = restToolNames(config.prefix ?? 'koharu');
  const staging = createStaging();
  let stopWatching = () => undefined as void;

  const door: ServedDoor = {
    name: 'scene',
    tools: [
      ...sceneTools(names, session, registry),
      ...sceneRestTools(restNames, session, staging),
    ].map((tool) => followingShared(session, tool)),
    // authority.md §3: the op kinds an apply, undo or redo acts on, one target per pipeline
    // step, and the REST-only writes' own targets.
    targetForms: [
      ...OP_KINDS,
      'pipeline:<step>',
      'export:<format>',
      'import:<source>',
      'create_project:<name>',
      'delete_project:<id>',
      'upload:<file name>',
      'import_project:<sha256>',
    ],
    limits: { requestBytes: 8 * 1024 * 1024, timeoutMs: 120_000 },
    mcp: {
      presenter: scenePresenter(names.export),
      instructions:
        `Scene door (Koharu-compatible): ${names.openProject} a project, read it with ${names.getScene} (or GET /api/v1/scene.json), ` +
        `edit with ${names.apply} ops and ${names.undo}/${names.redo}, run ${names.startPipeline} and follow GET /api/v1/events, ` +
        `${names.export}, then ${names.closeProject}. A client with the MCP tasks extension gets ${names.startPipeline} as a task it can poll and cancel.`,
      // A pipeline run is a kernel job: as an MCP task it follows that job.
      tasks: { [names.startPipeline]: { support: 'optional', jobOf: startedJob } },
    },
    http: {
      routes: sceneRoutes({
        session,
        registry,
        kernel: started,
        names,
        restNames,
        staging,
        version: AIRLOCK_VERSION,
      }).map(followingSharedRoute(session)),
      async snapshot({ agent }) {
        await session.sync();
        const p = session.current();
        const info = session.info();
        // Where the project lies on the server's disk is the owner's to know.
        const project = info && agent !== null ? { id: info.id, name: info.name } : info;
        return { scene: { project, epoch: p ? p.history.epoch : null } };
      },
    },
    async start(k) {
      kernel = k;
      // Embedded: other processes on the data folder change the scene too; publish what they did.
      stopWatching = session.watch(WATCH_MS, (err) =>
        ctx.logger.warn({ err }, 'could not follow the workspace scene'),
      );
    },
    // Scale-out: a pipeline whose instance died goes on here from its last logged page.
    resumeJob: (job) => resumePipeline({ session, registry }, job),
    // A journaled apply/undo/redo left open by a crash: its project's history decides.
    resolveOperation: (entry) => resolveSceneOperation(session, entry, ctx.logger),
    // The open project stays the workspace's: the other processes (and a restart) go on with it.
    async stop() {
      stopWatching();
      await session.release();
    },
  };
  return [door];
}

/** How often an embedded process looks for scene changes other processes made. */
const WATCH_MS = 500;

/**
 * Every call first catches up with the workspace's open project and its
 * history (session.sync), so any process or instance answers from the same
 * scene and epoch.
 */
function followingShared(session: SceneSession, tool: AnyToolDef): AnyToolDef {
  const handler = tool.handler;
  return {
    ...tool,
    handler: async (input, ctx) => {
      await session.sync();
      return handler(input, ctx);
    },
  };
}

const followingSharedRoute =
  (session: SceneSession) =>
  (route: RestRoute): RestRoute => ({
    ...route,
    handler: async (req) => {
      await session.sync();
      return route.handler(req);
    },
  });

/** The job id a `{jobId}` result names. */
function startedJob(value: unknown): string | null {
  const id = (value as { jobId?: unknown } | null)?.jobId;
  return typeof id === 'string' ? id : null;
}
