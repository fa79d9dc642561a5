/** `airlock serve` and `airlock stdio`. */
import { intOption, parse, UsageError } from '../args.js';
import { createProcessLogger } from '../logger.js';
import { TOOL_NAME_MODES, type ToolNames } from '../../transport/mcp/tool-names.js';
import { readConfig } from '../config/config-file.js';
import {
  ApprovalsSchema,
  listBudgetOf,
  HttpSchema,
  NotifySchema,
  OpenApiMountsSchema,
  OAuthConfigSchema,
} from '../config/config-check.js';
import { availableDoors, DEFAULT_DOORS } from '../workspace/doors.js';
import { serveHttpUntilSignal } from '../server/http-serve.js';
import { createWebUi } from '../../web/web-ui.js';
import { approvalUrl } from '../../transport/mcp/approval-delivery.js';
import { readServerRecord } from '../server/server-record.js';
import type { OpenApiMount } from '../../doors/context.js';
import { UPSTREAM_HELP, UPSTREAM_OPTIONS } from './mcp.js';
import {
  buildWorkspace,
  checkAnonymous,
  planDoors,
  relayPortOption,
  serveStdioUntilSignal,
  storeSettings,
  str,
} from '../workspace/command-workspace.js';
import { prepareDataFolder, resolveRunAs } from '../server/run-as.js';
import { resolve } from 'node:path';
import { refusedWebhook, type NotifyConfig } from '../../notify/webhooks.js';
import {
  metricsSettings,
  tracesSettings,
  TelemetryConfigSchema,
  type TelemetryConfig,
} from '../../telemetry/settings.js';

export const SERVE_HELP = `Usage: airlock serve [options]

Runs the workspace: one HTTP server with MCP at /mcp (all doors) and
/mcp/<door> (one door), the REST API at /api/v1, events at /api/v1/events
and the web UI at /. Data is kept in --data (SQLite, nothing to install).

Options:
  --port N           HTTP port (default: AIRLOCK_PORT, else the config file's
                     port, else 7300; 0 picks a free one)
  --host H           bind address (default 127.0.0.1)
  --data DIR         data folder (default ./.airlock)
  --doors a,b        doors to mount (default: scene,notes,page, those built)
  --token T          the token of the agent 'default' (or AIRLOCK_TOKEN); without it
                     the first start makes one and keeps it in DATA/default-agent.token
  --allow-anonymous  MCP requests without an agent token act as the agent
                     'anonymous' (loopback binds only)
  --store URL        postgres://… to keep all state in PostgreSQL (default: SQLite in --data)
  --bus URL          redis://… to share events across instances
  --relay-port N     the page door's relay port (default 19100; 0 picks a free one)
  --openapi SPEC     mount the openapi door over an OpenAPI/Swagger document or
                     compiled catalog (repeatable; pair each with --base-url URL
                     and --prefix P, default prefix 'plane')
${UPSTREAM_HELP}
  --public-url URL   the address the owner opens the web UI at (behind a proxy); it
                     sets the passkeys' RP ID and origin and the OAuth issuer and
                     resources (default http://localhost:PORT on a loopback bind)
  --run-as USER      started as root: make the data folder USER's (0700, files 0600),
                     bind, then drop to USER, so the account agents run under
                     cannot read the store (see docs/security.md)
  --metrics-port N   serve Prometheus metrics at http://127.0.0.1:N/metrics (loopback
                     only, no token); metrics are also at /metrics on --port for
                     the owner. Off by default; also on with {"telemetry":
                     {"metrics": true}} or OTEL_EXPORTER_OTLP_ENDPOINT (OTLP export)
  --allow-self       allow an --openapi door whose --base-url is this server's own
                     API (refused otherwise; the door acts as the calling agent)
  --tool-names M     exact (default: the doors' own names, e.g. koharu.apply)
                     or portable (names every host accepts, ^[a-zA-Z0-9_-]{1,64}$:
                     koharu_apply; Claude Desktop, claude.ai, OpenAI and Copilot
                     need it). Calls accept both forms; rules use the exact name
  --config FILE      JSON file with any of the options above (flags win), and
                     limits per door: {"limits": {"notes": {"timeoutMs": 8000}}}
                     (requestBytes, responseBytes, concurrentCalls, timeoutMs,
                     resultTokens: a read's result budget, default 20000),
                     and the owner's policy: {"policy": {"readOnly": ["scene"],
                     "rules": [{"door": "openapi", "target": "plane:pets.*",
                     "decision": "ask", "reason": "…", "rate": "10/minute"}]}}
                     (first match wins; then read → allow, write → allow,
                     destructive → ask; 'airlock policy --help' edits it live),
                     and connection limits: {"http": {"headersTimeoutMs": 10000,
                     "requestTimeoutMs": 60000, "maxConnectionsPerAddress": 512,
                     "sessionIdleMs": 600000}} (an idle 2025-era MCP session ends),
                     and the job lease (scale-out): {"jobs": {"leaseMs": 30000}}
                     and how long a call that showed the owner's card waits
                     for the decision: {"approvals": {"waitSeconds": 45}} (1-55),
                     and the owner's presence: {"owner": {"presence": "passkey"}}
                     (every approval and policy, agent, upstream or credential
                     change needs the owner's passkey; default once a passkey is
                     enrolled; "none" turns it off), and {"publicUrl": "https://…"}
                     and remote MCP clients by OAuth (on by default; each
                     connection is your consent in the web UI and makes an
                     agent): {"oauth": {"enabled": true, "dynamicRegistration":
                     false, "accessTokenMinutes": 60}}
                     and retention: {"retention": {"journalHours": 24, "auditDays": 90,
                     "auditArchive": "audit-archive.jsonl", "sweepMinutes": 10}}
                     (auditDays 0 keeps the audit forever; pruned entries are
                     appended to the archive, in the data folder, first).
                     Every key is checked before anything starts: an unknown
                     one, at any level, exits 2 naming it and the key meant
  -h, --help         this help

Exit codes: 0 clean shutdown (SIGINT/SIGTERM), 2 bad arguments, 1 other errors.`;

export const STDIO_HELP = `Usage: airlock stdio [options]

Serves doors over MCP stdio, for clients that spawn servers (the
configuration \`airlock serve\` prints runs exactly this). Only protocol
messages go to stdout; logs go to stderr.

Approvals: a stdio process has no web UI of its own. Point --data at the
folder of a running \`airlock serve\` and approve its requests in that
server's web UI, or with \`airlock approvals\` on the same folder.

Options:
  --data DIR         data folder (default ./.airlock; use an absolute path:
                     clients spawn servers in a folder of their choosing)
  --doors a,b        doors to mount (default: scene,notes — the page door
                     only when named, since it binds the relay port)
  --relay-port N     the page door's relay port (default 19100; 0 picks a
                     free one; another process may already hold 19100)
  --store URL        postgres://… (default: SQLite in --data)
  --bus URL          redis://… to share events with other instances
  --tool-names M     exact (default) or portable, as for \`airlock serve\`
  --config FILE      the same JSON config file as \`airlock serve\` (unknown keys exit 2)
  --upstream NAME=COMMAND|URL, --upstream-header NAME:'Header: value'
                     MCP servers behind the mcp door (as for \`airlock serve\`)
  -h, --help         this help`;

const COMMON = {
  data: { type: 'string' },
  doors: { type: 'string' },
  store: { type: 'string' },
  bus: { type: 'string' },
  config: { type: 'string' },
  'tool-names': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...UPSTREAM_OPTIONS,
} as const;

/** `--tool-names` or `toolNames` in the config file (tool-names.ts). */
function toolNamesOption(flag: string | undefined, config: Record<string, unknown>): ToolNames {
  const value = flag ?? config.toolNames ?? 'exact';
  if (typeof value === 'string' && (TOOL_NAME_MODES as readonly string[]).includes(value))
    return value as ToolNames;
  throw new UsageError(
    `${flag !== undefined ? '--tool-names' : '--config: toolNames'}: '${String(value)}' is not a naming; use ${TOOL_NAME_MODES.join(' or ')}`,
  );
}

/**
 * The config file's `approvals` section: `{"waitSeconds": 45}`, how long a
 * 2025-era call that showed its card's link waits for the owner.
 */
function configApprovalWait(config: Record<string, unknown>): number | undefined {
  const seconds =
    config.approvals === undefined
      ? undefined
      : ApprovalsSchema.parse(config.approvals).waitSeconds;
  return seconds === undefined ? undefined : seconds * 1000;
}

/** The config file's `http` section: connection timeouts and the per-address connection cap. */
function configHttp(config: Record<string, unknown>) {
  return config.http === undefined ? undefined : HttpSchema.parse(config.http);
}

/**
 * The config file's `notify` section (authority.md §6), its webhook URLs
 * checked: one that is a private or loopback address not listed in
 * `notify.allowPrivate` stops the start (exit 2, naming it).
 */
async function configNotify(config: Record<string, unknown>): Promise<NotifyConfig | undefined> {
  if (config.notify === undefined) return undefined;
  const notify = NotifySchema.parse(config.notify);
  const refused = await refusedWebhook(notify);
  if (refused) throw new UsageError(refused);
  return notify;
}

/** The config file's `telemetry` section (telemetry/settings.ts). */
function configTelemetry(config: Record<string, unknown>): TelemetryConfig {
  if (config.telemetry === undefined) return {};
  const parsed = TelemetryConfigSchema.safeParse(config.telemetry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `--config: telemetry.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/**
 * `--openapi SPEC` mounts, paired by position with `--base-url` and `--prefix`
 * (`--openapi a.yaml --base-url https://a --prefix a --openapi b.json …`),
 * plus `openapi: [{spec, baseUrl, prefix, headers, defaults}]` in the config file.
 */
function openapiMounts(
  specs: string[],
  baseUrls: string[],
  prefixes: string[],
  config: Record<string, unknown>,
): OpenApiMount[] {
  if (baseUrls.length > specs.length)
    throw new UsageError(
      '--base-url given more often than --openapi; pair each with one --openapi',
    );
  if (prefixes.length > specs.length)
    throw new UsageError('--prefix given more often than --openapi; pair each with one --openapi');
  const fromFlags = specs.map((spec, i) => ({ spec, baseUrl: baseUrls[i], prefix: prefixes[i] }));
  const fromConfig = config.openapi === undefined ? [] : OpenApiMountsSchema.parse(config.openapi);
  return [...fromFlags, ...fromConfig];
}

function defaultDoors(): string[] {
  const available = new Set(availableDoors());
  return DEFAULT_DOORS.filter((d) => available.has(d));
}

/**
 * Doors a spawned stdio process mounts unless told otherwise: not `page`,
 * whose relay port a running server (or a second spawned process) already
 * holds, and not `openapi`, whose documents are given as flags.
 */
const STDIO_SKIPS = new Set(['page', 'openapi']);
const stdioDoors = (doors: string[]) => doors.filter((d) => !STDIO_SKIPS.has(d));

export async function serve(argv: string[]): Promise<number> {
  const { values } = parse({
    args: argv,
    options: {
      ...COMMON,
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'allow-anonymous': { type: 'boolean' },
      'allow-self': { type: 'boolean' },
      'public-url': { type: 'string' },
      'run-as': { type: 'string' },
      'metrics-port': { type: 'string' },
      'relay-port': { type: 'string' },
      openapi: { type: 'string', multiple: true },
      'base-url': { type: 'string', multiple: true },
      prefix: { type: 'string', multiple: true },
    },
  });
  if (values.help) {
    process.stdout.write(SERVE_HELP + '\n');
    return 0;
  }
  const config = readConfig(values.config);
  const port = intOption(
    'port',
    values.port ?? process.env.AIRLOCK_PORT ?? str(config.port),
    7300,
    0,
    65535,
  );
  const relayPort = relayPortOption(values['relay-port'], config);
  const openapi = openapiMounts(
    values.openapi ?? [],
    values['base-url'] ?? [],
    values.prefix ?? [],
    config,
  );
  const toolNames = toolNamesOption(values['tool-names'], config);
  const approvalWaitMs = configApprovalWait(config);
  const host = values.host ?? str(config.host) ?? '127.0.0.1';
  const publicUrl = values['public-url'] ?? str(config.publicUrl);
  if (publicUrl !== undefined && !URL.canParse(publicUrl))
    throw new UsageError(
      `--public-url: '${publicUrl}' is not a URL (e.g. https://airlock.example.com)`,
    );
  const token = values.token ?? str(config.token) ?? process.env.AIRLOCK_TOKEN;
  const allowAnonymous = values['allow-anonymous'] === true || config.allowAnonymous === true;
  checkAnonymous(host, allowAnonymous);
  // Everything the flags and the file say is checked before anything starts.
  const plan = planDoors(values, config, defaultDoors(), openapi);
  const http = configHttp(config);
  const metricsPortValue = values['metrics-port'] ?? str(config.metricsPort);
  const metricsPort =
    metricsPortValue === undefined
      ? null
      : intOption('metrics-port', metricsPortValue, 0, 0, 65535);
  const telemetry = configTelemetry(config);
  const metrics = metricsSettings(process.env, telemetry, metricsPort !== null);
  const traces = tracesSettings(process.env, telemetry);
  const notify = await configNotify(config);
  const logger = createProcessLogger();
  const settings = storeSettings(values, config);
  const runAsUser = values['run-as'] ?? str(config.runAs);
  const runAs = runAsUser ? resolveRunAs(runAsUser) : undefined;
  if (runAs) prepareDataFolder(resolve(settings.data), runAs);
  const workspace = await buildWorkspace({
    ...settings,
    ...plan,
    logger,
    relayPort,
    openapi,
    config,
    metrics,
    traces,
    toolNames,
  });
  return serveHttpUntilSignal({
    workspace,
    logger,
    host,
    port,
    metricsPort,
    toolNames,
    approvalWaitMs,
    listBudgetTokens: listBudgetOf(config),
    ...(notify ? { notify } : {}),
    ...(config.oauth !== undefined ? { oauth: OAuthConfigSchema.parse(config.oauth) } : {}),
    agentToken: token,
    allowAnonymous,
    publicUrl,
    runAs,
    stdioArgs: [
      'stdio',
      '--doors',
      stdioDoors(plan.doors).join(','),
      ...(toolNames === 'portable' ? ['--tool-names', 'portable'] : []),
      ...(values.upstream ?? []).flatMap((u) => ['--upstream', u]),
      ...(values['upstream-header'] ?? []).flatMap((h) => ['--upstream-header', h]),
    ],
    title: `Airlock is serving ${workspace.mounts.length ? workspace.mounts.join(', ') : 'no doors'} (store: ${workspace.store.kind} at ${workspace.store.location})`,
    clientName: 'airlock',
    links: [
      ['REST API', '/api/v1'],
      ['API docs', '/api/v1/openapi.json'],
      ['Events', '/api/v1/events'],
      ['Events (Koharu)', '/events'],
      ['Web UI', '/'],
      ['Health', '/healthz'],
    ],
    staticHandler: createWebUi(),
    http,
    selfTargets: {
      mounts: openapi,
      allowSelf: values['allow-self'] === true || config.allowSelf === true,
    },
  });
}

export async function stdio(argv: string[]): Promise<number> {
  const { values } = parse({
    args: argv,
    options: { ...COMMON, 'relay-port': { type: 'string' } },
  });
  if (values.help) {
    process.stdout.write(STDIO_HELP + '\n');
    return 0;
  }
  const config = readConfig(values.config);
  const relayPort = relayPortOption(values['relay-port'], config);
  const toolNames = toolNamesOption(values['tool-names'], config);
  const approvalWaitMs = configApprovalWait(config);
  const plan = planDoors(values, config, stdioDoors(defaultDoors()));
  const logger = createProcessLogger();
  const workspace = await buildWorkspace({
    ...storeSettings(values, config),
    ...plan,
    logger,
    relayPort,
    config,
    traces: tracesSettings(process.env, configTelemetry(config)),
    // The owner answers this process's approvals from the CLI in the same folder.
    owner: true,
    toolNames,
  });
  const data = workspace.data;
  return serveStdioUntilSignal(workspace, logger, {
    tracer: workspace.tracing?.requests,
    toolNames,
    ...(approvalWaitMs ? { approvalWaitMs } : {}),
    ...(listBudgetOf(config) ? { listBudgetTokens: listBudgetOf(config)! } : {}),
    // The inbox of the server running on this folder, asked afresh for each ask.
    approvalLink: async (id) => {
      const server = readServerRecord(data);
      return server ? approvalUrl(server.url, id) : undefined;
    },
    noInbox: `No Airlock server is running on ${data} to show the owner this request: the owner answers it with \`airlock approvals --data ${data}\`, or starts \`airlock serve --data ${data}\` and approves it in the web UI.`,
  });
}
