/**
 * Builds one low-level SDK `Server` exposing the tools of some mounted doors.
 * Tool calls go to `kernel.call`, so every call passes the kernel pipeline;
 * the SDK validates nothing of ours (strict validation and the error shape are
 * the kernel's and the door's, e.g. notes answers malformedRequest inside its
 * envelope, not as a protocol error).
 */
import { AIRLOCK_VERSION } from '../../kernel/version.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  mergeCapabilities,
  inputRequired,
  ProtocolError,
  Server,
} from '@modelcontextprotocol/server';
import {
  APPROVAL_WAIT_MS,
  MAX_APPROVAL_WAIT_MS,
  approvalMessage,
  approvalUrl,
  createApprovalStateSeal,
  decided,
  isApprovalState,
  withApprovalLink,
  pendingApproval,
  type ApprovalState,
  type ApprovalStateSeal,
} from './approval-delivery.js';
import type {
  CallToolRequest,
  InputRequiredResult,
  JSONRPCRequest,
  RequestId,
  Result,
  ServerCapabilities,
  ServerContext,
} from '@modelcontextprotocol/server';
import type { ToolDescriptor } from '../../kernel/kernel.js';
import { agentKeyOf, type Connection } from '../../kernel/connection.js';
import type { McpRequestScope, ProtocolErrorOutcome, ServingKernel } from '../surface.js';
import { presentOutcome } from './present.js';
import {
  answerApprovalAsTask,
  answerAsLegacyTask,
  answerAsTask,
  registerTaskMethods,
  TASKS_EXTENSION,
} from './tasks/mcp-tasks.js';
import {
  isCreateTaskAnswer,
  isLegacyEra,
  LEGACY_TASKS_CAPABILITY,
  wantsLegacyTask,
} from './tasks/mcp-tasks-2025.js';
import { nameTools, type NamedTool, type ToolNames } from './tool-names.js';

export const SERVER_INFO = { name: 'airlock', version: AIRLOCK_VERSION };

/** How an endpoint serves MCP beyond its mounts; the composition root sets it. */
export interface McpServing {
  /** How tools are named in `tools/list` (tool-names.ts; default `exact`). */
  toolNames?: ToolNames;
  /**
   * The token budget of an endpoint's whole `tools/list` when it serves
   * several mounts (`/mcp`; default 6000): over it, a door with a compact
   * form (`McpSurface.compactTools`) is listed by that form alone.
   */
  listBudgetTokens?: number;
  /** The endpoint of one door (`/mcp/NAME`): all its tools listed (paged), never its compact form. */
  oneMount?: boolean;
  /**
   * The owner's card for an approval in the web UI (serve's own address, or
   * the server running on the same data folder); undefined when no inbox
   * can be reached.
   */
  approvalLink?: (approvalId: string) => Promise<string | undefined>;
  /** How long a 2025-era call waits for the owner after showing the link (default 45 s, below 60). */
  approvalWaitMs?: number;
  /** What an ask says when no inbox can be reached (stdio with no server on its folder). */
  noInbox?: string;
}

export interface McpServerOptions extends McpServing {
  kernel: ServingKernel;
  /** Door mounts served by this endpoint. */
  mounts: string[];
  /**
   * Connection identity for a request (spec/kernel.md §4): the transport
   * decides from the MCP session, the bearer principal or the process.
   */
  identify(request: {
    sessionId?: string | undefined;
    principal?: string | undefined;
    /** The client's `clientInfo.name`, when it said (stdio names its agent after it). */
    clientName?: string | undefined;
  }): Pick<Connection, 'id' | 'kind' | 'agent' | 'session'>;
  /**
   * Runs a request's handler in that request's context (stdio tracing:
   * mcp-stdio-trace.ts). Every handler, a door's too, runs through it: the
   * SDK's stdio entry queues messages that arrive while it is busy and hands
   * them on from the context of the one that started the queue.
   */
  requestContext?: RequestContext | undefined;
}

/** Runs `run` in the context of request `id` (its trace span), or as is when it has none. */
export type RequestContext = <T>(id: RequestId, run: () => T) => T;

/** The tools an endpoint serves: name (either form) → mount, exact name and descriptor, and the `tools/list` answer. */
export interface ServedTools {
  readonly index: ReadonlyMap<string, NamedTool<ToolDescriptor>>;
  /** What `tools/list` answers (paged by `TOOLS_PAGE`). */
  readonly tools: readonly ToolDescriptor[];
}

export const DEFAULT_LIST_BUDGET_TOKENS = 6000;
/** Tools per `tools/list` page; `nextCursor` names the next. */
export const TOOLS_PAGE = 500;
/** About four characters a token for JSON and English. */
const tokensOf = (tools: readonly ToolDescriptor[]) => Math.ceil(JSON.stringify(tools).length / 4);

interface SharedTools {
  sources: (readonly ToolDescriptor[])[];
  served: ServedTools;
}
const sharedTools = new WeakMap<object, Map<string, SharedTools>>();

/**
 * The tools `mounts` serve, named per `names` (tool-names.ts), built once
 * and shared by every server of the kernel until a mount's descriptors
 * change (`kernel.tools` answers the same array until `refreshTools`): a
 * 2025-era session keeps a server for its life, and a copy of the index
 * each cost ~3.7 KB (issue #16). Throws when two tools would be listed
 * under one name.
 */
export function servedTools(
  kernel: ServingKernel,
  mounts: string[],
  names: ToolNames = 'exact',
  /** The `tools/list` budget; null: list every tool (an endpoint of one door). */
  budgetTokens: number | null = DEFAULT_LIST_BUDGET_TOKENS,
): ServedTools {
  let byMounts = sharedTools.get(kernel);
  if (!byMounts) sharedTools.set(kernel, (byMounts = new Map()));
  const key = `${names}:${budgetTokens}:${JSON.stringify(mounts)}`;
  const sources = mounts.map((m) => kernel.tools(m));
  const known = byMounts.get(key);
  if (known && sources.every((s, i) => s === known.sources[i])) return known.served;
  const { listed, lookup } = nameTools(
    names,
    mounts.flatMap((mount, i) => (sources[i] ?? []).map((tool) => ({ mount, tool }))),
  );
  const compactOf = new Map(
    mounts.map((m) => [m, new Set(kernel.door(m)?.mcp?.compactTools?.() ?? [])]),
  );
  const all = [...listed.entries()].map(([shown, { mount, tool }]) => ({
    mount,
    compact: compactOf.get(mount)!.has(tool.name),
    tool: shown === tool.name ? tool : { ...tool, name: shown },
  }));
  // A compact form stands in for its door's tools only where the whole list is over budget.
  const full = all.filter((t) => !t.compact).map((t) => t.tool);
  const shortened =
    budgetTokens !== null && tokensOf(full) > budgetTokens
      ? all.filter((t) => (compactOf.get(t.mount)!.size > 0 ? t.compact : true)).map((t) => t.tool)
      : null;
  const served = { index: lookup, tools: shortened ?? full };
  byMounts.set(key, { sources, served });
  return served;
}

export function createMcpServer({
  kernel,
  mounts,
  identify,
  toolNames = 'exact',
  listBudgetTokens = DEFAULT_LIST_BUDGET_TOKENS,
  oneMount = false,
  approvalLink,
  approvalWaitMs = APPROVAL_WAIT_MS,
  noInbox,
  requestContext,
}: McpServerOptions): Server {
  const served = servedTools(kernel, mounts, toolNames, oneMount ? null : listBudgetTokens);
  const instructions = mounts
    .map((m) => kernel.door(m)?.mcp?.instructions)
    .filter((s): s is string => typeof s === 'string')
    .join('\n\n');
  // Doors that add resources, prompts or logging through extendServer declare them here.
  const capabilities = mounts.reduce<ServerCapabilities>(
    (merged, m) =>
      mergeCapabilities(
        merged,
        (kernel.door(m)?.mcp?.capabilities ?? {}) as Partial<ServerCapabilities>,
      ),
    { tools: { listChanged: false } },
  );
  // Besides the tools a door offers as tasks, any call the owner's policy asks
  // about can wait for the owner as a task (issue 30): every door offers them.
  const offersTasks = mounts.length > 0;
  // SEP-2663: the extension is declared under capabilities.extensions (never a `tasks` slot);
  // the 2026 wire has no per-tool `execution.taskSupport` (the SDK deletes it), the server decides per call.
  if (offersTasks) capabilities.extensions = { ...capabilities.extensions, [TASKS_EXTENSION]: {} };
  // The 2025-11-25 tasks (mcp-tasks-2025.ts); the SDK drops this slot from 2026-era answers.
  if (offersTasks) capabilities.tasks = LEGACY_TASKS_CAPABILITY;
  // A door whose tools can change (mcp upstreams) declares tools.listChanged.
  const dynamicTools = capabilities.tools?.listChanged === true;
  const server = new AirlockServer(
    SERVER_INFO,
    { capabilities, ...(instructions ? { instructions } : {}) },
    requestContext,
  );
  const seal = sealFor(kernel);

  const scope: ServerScope = {
    kernel,
    server,
    identify,
    seal,
    offersTasks,
    approvalLink,
    approvalWaitMs,
    noInbox,
    served,
  };

  server.setRequestHandler('tools/list', async (request, ctx) => {
    // Paged: `nextCursor` is the offset of the next page.
    const cursor = request.params?.cursor;
    const from = cursor === undefined ? 0 : Number(cursor);
    const { served } = scope;
    if (!Number.isInteger(from) || from < 0 || from > served.tools.length)
      throw new ProtocolError(
        -32602,
        `Unknown cursor '${String(cursor)}'; call tools/list without a cursor to start again.`,
      );
    const page = served.tools.slice(from, from + TOOLS_PAGE);
    const next = from + TOOLS_PAGE < served.tools.length ? String(from + TOOLS_PAGE) : undefined;
    // 2025-11-25: a tool is called as a task only where it says so (the 2026 wire has no such
    // field); told only to a client that declared tasks, so the others' list costs no more tokens.
    const tasksClient = isLegacyEra(ctx) && server.getClientCapabilities()?.tasks !== undefined;
    const tools = offersTasks && tasksClient ? page.map(taskOptional) : page;
    return { tools: tools as never, ...(next ? { nextCursor: next } : {}) };
  });

  server.setRequestHandler('tools/call', (request, ctx) => callTool(scope, request, ctx));

  if (offersTasks)
    registerTaskMethods(server, kernel, (ctx) => {
      const { base } = whoIs(scope, ctx);
      return agentKeyOf(base) ?? base.id;
    });
  // Only a session that initialized (2025-era HTTP, stdio) can be told; a 2026-era
  // request's server lives for one request and reads the list afresh.
  if (dynamicTools)
    server.oninitialized = () => {
      const unsubscribe = kernel.events.subscribe(
        ({ data }) => {
          if (data.event !== 'toolsChanged' || !mounts.includes(String(data.door))) return;
          try {
            scope.served = servedTools(
              kernel,
              mounts,
              toolNames,
              oneMount ? null : listBudgetTokens,
            );
          } catch (error) {
            // Two doors now offer one name: keep the last good list until it is resolved.
            kernel.logger.warn({ err: (error as Error).message }, 'tool list not refreshed');
            return;
          }
          if (server.transport) void server.sendToolListChanged().catch(() => undefined);
        },
        { events: ['toolsChanged'] },
      );
      const previous = server.onclose;
      server.onclose = () => {
        unsubscribe();
        previous?.();
      };
    };

  for (const mount of mounts) kernel.door(mount)?.mcp?.extendServer?.(server);
  return server;
}

/** What one server's handlers share; built once per server. */
interface ServerScope {
  kernel: ServingKernel;
  server: AirlockServer;
  identify: McpServerOptions['identify'];
  seal: ApprovalStateSeal;
  offersTasks: boolean;
  approvalLink: McpServing['approvalLink'];
  approvalWaitMs: number;
  noInbox: string | undefined;
  /** Read again when a door's tools change (kernel `refreshTools` → `toolsChanged`). */
  served: ServedTools;
}

/** Who a request acts as (kernel §4), and the client it says it is. */
function whoIs({ server, identify }: ServerScope, ctx: ServerContext) {
  const principal = ctx.http?.authInfo?.clientId;
  const clientInfo =
    server.getClientVersion() ??
    ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientInfo' as never];
  const client =
    clientInfo && typeof clientInfo === 'object' && 'name' in clientInfo
      ? {
          name: String((clientInfo as { name: unknown }).name),
          version: String((clientInfo as { version?: unknown }).version ?? ''),
        }
      : undefined;
  return {
    base: identify({ sessionId: ctx.sessionId, principal, clientName: client?.name }),
    client,
  };
}

/**
 * `tools/call`: the call goes through the kernel (as a task where the door or
 * the client asks for one); an ask waits for the owner where the client can.
 */
async function callTool(scope: ServerScope, request: CallToolRequest, ctx: ServerContext) {
  const { kernel, server, seal, offersTasks, approvalLink, approvalWaitMs, noInbox } = scope;
  const entry = scope.served.index.get(request.params.name);
  if (!entry) {
    throw new ProtocolError(
      -32602,
      `Unknown tool '${request.params.name}'; call tools/list to see the available tools.`,
    );
  }
  // The exact name from here on: the kernel, policy, audit and approvals know no other.
  const name = entry.name;
  const { base, client } = whoIs(scope, ctx);
  const progressToken = request.params._meta?.progressToken;
  const call = () =>
    kernel.call(entry.mount, name, request.params.arguments ?? {}, {
      connection: { ...base, ...(client ? { client } : {}) },
      signal: ctx.mcpReq.signal,
      ...(progressToken !== undefined
        ? {
            progress: (progress: number, total?: number, message?: string) =>
              ctx.mcpReq.notify({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress,
                  ...(total !== undefined ? { total } : {}),
                  ...(message ? { message } : {}),
                },
              }),
          }
        : {}),
    });
  const mcp = kernel.door(entry.mount)?.mcp;
  const run = () =>
    mcp?.withMcpRequest ? mcp.withMcpRequest(requestScope(server, ctx), call) : call();
  // A retry carrying our approval state must carry it unaltered, for this agent and tool.
  const state = ctx.mcpReq.requestState();
  const resumed = isApprovalState(state);
  // Sealed for the agent's key (name and id): a later agent of that name cannot open it.
  const agent = agentKeyOf(base);
  if (resumed && !(await seal.open(state, { agent: agent ?? '', tool: name })))
    throw new ProtocolError(
      -32602,
      'requestState failed its integrity check (altered, expired, or minted for another agent or tool); call the tool again without it.',
      { reason: 'invalid_request_state' },
    );
  const asTask = kernel.door(entry.mount)?.mcp?.tasks?.[name];
  // A 2025-era call asking for a task (2025-11-25) is one, whatever it needs.
  if (offersTasks && !resumed && wantsLegacyTask(ctx, request.params))
    return (await answerAsLegacyTask(kernel, server, ctx, {
      support: asTask,
      mount: entry.mount,
      tool: name,
      args: request.params.arguments ?? {},
      connection: { ...base, ...(client ? { client } : {}) },
      scope: () => requestScope(server, ctx),
      link: approvalLink,
    })) as never;
  if (asTask) {
    const answered = await answerAsTask(kernel, ctx, {
      support: asTask,
      mount: entry.mount,
      tool: name,
      args: request.params.arguments ?? {},
      connection: { ...base, ...(client ? { client } : {}) },
      scope: () => requestScope(server, ctx),
    });
    if (answered) return answered as never;
  }
  let outcome = await run();
  const approvalId = outcome.ok ? null : pendingApproval(outcome);
  if (approvalId && !resumed && agent && offersTasks) {
    // A client that follows tasks waits for the owner as a task (issue 30).
    const task = await answerApprovalAsTask(
      kernel,
      ctx,
      {
        mount: entry.mount,
        tool: name,
        args: request.params.arguments ?? {},
        connection: { ...base, ...(client ? { client } : {}) },
        scope: () => requestScope(server, ctx),
      },
      approvalId,
    );
    if (task) return task as never;
  }
  if (approvalId && !resumed && agent) {
    const offered = await offerApproval(
      server,
      ctx,
      kernel,
      seal,
      { approvalId, agent, tool: name },
      { link: approvalLink, waitMs: approvalWaitMs },
    );
    if (offered === 'retry') outcome = await run();
    else if (offered === 'cancelled')
      // Nobody reads this answer (the SDK drops it for a cancelled request).
      throw new ProtocolError(
        -32800,
        'The call was cancelled by the client; its ask was withdrawn.',
      );
    else if (offered) return offered as never;
  }
  // Every ask carries its card's link, whatever the client can show.
  if (!outcome.ok) outcome = await withApprovalLink(outcome, approvalLink, noInbox);
  const presented = presentOutcome(mcp?.presenter, kernel.tool(entry.mount, name) ?? name, outcome);
  if ('protocolError' in presented && presented.protocolError) {
    const { code, message, data } =
      presented.protocolError as ProtocolErrorOutcome['protocolError'];
    throw new ProtocolError(code, message, data);
  }
  return presented as never;
}

/**
 * The SDK's `Server`, but a 2025-era `tools/call` may answer the
 * `CreateTaskResult` of a task it started (mcp-tasks-2025.ts): the SDK
 * checks every tools/call answer as a `CallToolResult`, which a
 * `CreateTaskResult` is not; and with a `requestContext`, every handler runs
 * in its request's context.
 */
class AirlockServer extends Server {
  private readonly requestContext: RequestContext | undefined;

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    requestContext: RequestContext | undefined,
  ) {
    super(info, options);
    this.requestContext = requestContext;
  }

  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    const wrapped = this.answerTasks(method, handler);
    // Read at call time: the SDK's constructor registers handlers (initialize, ping) before ours is set.
    return (request, ctx) =>
      this.requestContext
        ? this.requestContext(request.id, () => wrapped(request, ctx))
        : wrapped(request, ctx);
  }

  private answerTasks(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const created = new WeakMap<object, Result>();
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (!isCreateTaskAnswer(result)) return result;
      created.set(request, result);
      return { content: [] };
    });
    return async (request, ctx) => {
      const result = await checked(request, ctx);
      return created.get(request) ?? result;
    };
  }
}

/** A tool as a 2025-era client is told it may be called as a task (or not). */
type TaskOptionalTool = ToolDescriptor & { execution: { taskSupport: 'optional' } };
const taskOptionalTools = new WeakMap<object, TaskOptionalTool>();
function taskOptional(tool: ToolDescriptor): TaskOptionalTool {
  const known = taskOptionalTools.get(tool);
  if (known) return known;
  const marked: TaskOptionalTool = { ...tool, execution: { taskSupport: 'optional' } };
  taskOptionalTools.set(tool, marked);
  return marked;
}

/** The parts of a tools/call request a door may read beyond its arguments (door.ts `McpRequestScope`). */
function requestScope(server: Server, ctx: ServerContext): McpRequestScope {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities();
  const state = ctx.mcpReq.requestState();
  return {
    clientCapabilities: (declared ?? {}) as Record<string, unknown>,
    inputResponses: ctx.mcpReq.inputResponses,
    requestState: typeof state === 'string' ? state : undefined,
    log: (level, data) => ctx.mcpReq.log(level, data),
    closeStream: ctx.http?.closeSSE,
    // Mid-call requests to the client exist only in a session (2025 era, stdio).
    ...(envelope === undefined
      ? {
          client: {
            sample: (params, options) =>
              ctx.mcpReq.requestSampling(
                params as never,
                { ...options, relatedRequestId: ctx.mcpReq.id } as never,
              ),
            elicit: (params, options) =>
              ctx.mcpReq.elicitInput(
                params as never,
                { ...options, relatedRequestId: ctx.mcpReq.id } as never,
              ),
            listRoots: (options) =>
              server.listRoots(undefined, { ...options, relatedRequestId: ctx.mcpReq.id } as never),
          },
        }
      : {}),
  };
}

const seals = new WeakMap<object, ApprovalStateSeal>();
/** One seal per kernel: every server instance of the workspace shares its key cache. */
function sealFor(kernel: ServingKernel): ApprovalStateSeal {
  let seal = seals.get(kernel);
  if (!seal) seals.set(kernel, (seal = createApprovalStateSeal(kernel)));
  return seal;
}

/**
 * Shows a pending approval to a client that declared URL-mode elicitation
 * (approval-delivery.ts): 2026-era → an input_required result to return;
 * 2025-era → the link, then a bounded wait for the owner ('retry' once
 * decided; 'cancelled' when the agent cancelled the call meanwhile, its ask
 * withdrawn). Null when the client cannot show a link, declined or cancelled
 * it (a client's answer is never the owner's decision: the call answers at
 * once with the link and the card stays), or the owner did not decide in
 * time.
 */
async function offerApproval(
  server: Server,
  ctx: ServerContext,
  kernel: ServingKernel,
  seal: ApprovalStateSeal,
  state: ApprovalState,
  options: {
    link: ((approvalId: string) => Promise<string | undefined>) | undefined;
    waitMs: number;
  },
): Promise<InputRequiredResult | 'retry' | 'cancelled' | null> {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.getClientCapabilities()) as
    { elicitation?: { url?: unknown } } | undefined;
  if (declared?.elicitation?.url === undefined) return null;
  const host = ctx.http?.req?.headers.get('host');
  const url =
    (await options.link?.(state.approvalId).catch(() => undefined)) ??
    (host ? approvalUrl(`http://${host}`, state.approvalId) : undefined);
  if (!url) return null;
  const message = approvalMessage(state.approvalId);
  if (envelope !== undefined)
    return inputRequired({
      inputRequests: { approval: inputRequired.elicitUrl({ message, url }) },
      requestState: await seal.seal(state),
    });
  const waitMs = Math.min(options.waitMs, MAX_APPROVAL_WAIT_MS);
  const stop = new AbortController();
  const answered = ctx.mcpReq
    .elicitInput(
      { mode: 'url', message, url, elicitationId: state.approvalId },
      { timeout: waitMs, signal: stop.signal },
    )
    .then(
      (result) => result.action,
      () => 'error' as const,
    );
  // `accept` means the client opened the link: keep waiting for the owner.
  const declined = answered.then((action) =>
    action === 'decline' || action === 'cancel' ? true : new Promise<never>(() => undefined),
  );
  // The agent gave up the call (notifications/cancelled): the wait ends at once and
  // the ask leaves the owner's inbox, as tasks/cancel does for a task (issue 30).
  const request = ctx.mcpReq.signal;
  const withdrawn = new Promise<'cancelled'>((resolve) => {
    const cancel = () => resolve('cancelled');
    if (request.aborted) cancel();
    else request.addEventListener('abort', cancel, { once: true });
    stop.signal.addEventListener('abort', () => request.removeEventListener('abort', cancel), {
      once: true,
    });
  });
  const inTime = await Promise.race([
    decided(kernel, state.approvalId, waitMs, stop.signal),
    declined.then(() => false),
    withdrawn,
  ]);
  stop.abort();
  if (inTime === 'cancelled') {
    await kernel.consent
      .withdraw(state.approvalId, 'the agent cancelled its call')
      .catch(() => undefined);
    return 'cancelled';
  }
  if (!inTime) return null;
  await server
    .createElicitationCompletionNotifier(state.approvalId)()
    .catch(() => undefined);
  return 'retry';
}
