/**
 * Serves an opened workspace over HTTP until SIGINT/SIGTERM: makes sure the
 * owner and the default agent have their credentials (authority.md §1),
 * listens, prints the URLs, the owner's sign-in link and ready-to-paste MCP
 * client configurations (HTTP and stdio) carrying the default agent's token,
 * then shuts down cleanly (stop taking connections, let in-flight calls
 * finish within the kernel's grace, close the rest). Shared by `serve`,
 * `openapi` and `mcp` (with `--port`).
 */
import { createOAuthServer, type OAuthSettings } from '../../transport/oauth/server.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkSelfTargets, type SelfTargetCheck } from '../workspace/self-target.js';
import { createHttpApp, sendMetrics } from '../../transport/http/http-app.js';
import { checkHostAndOrigin, isLoopbackHost } from '../../transport/http/guards.js';
import type { Logger } from '../../kernel/logger.js';
import type { Workspace } from '../workspace/workspace.js';
import {
  PORTABLE_TOOL_NAME,
  portableToolName,
  type ToolNames,
} from '../../transport/mcp/tool-names.js';
import { untilSignal } from '../signals.js';
import { removeServerRecord, writeServerRecord } from './server-record.js';
import { startNotifier, type NotifyConfig } from '../../notify/webhooks.js';
import { pushSource } from '../../notify/push.js';
import type { NotifyControl } from '../../transport/rest/rest-notify.js';
import { emailSource } from '../../notify/email.js';
import { approvalUrl } from '../../transport/mcp/approval-delivery.js';
import { DEFAULT_AGENT, ensureCredentials, OWNER_TOKEN_FILE } from '../workspace/credentials.js';
import { dropPrivileges, type RunAs } from './run-as.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The absolute path of the `airlock` command, for configurations that spawn it. */
const BIN_PATH = fileURLToPath(new URL('../../../bin/airlock.js', import.meta.url));

export interface HttpServeOptions {
  workspace: Workspace;
  logger: Logger;
  host: string;
  port: number;
  /** `--token` / `AIRLOCK_TOKEN`: the default agent's token. */
  agentToken: string | undefined;
  /** `--allow-anonymous`: MCP without a token acts as the agent `anonymous` (loopback only). */
  allowAnonymous: boolean;
  /** Arguments after `airlock` for the printed stdio configuration (e.g. `stdio --doors notes`). */
  stdioArgs: string[];
  /** First line of the start-up output. */
  title: string;
  /** Key of the server in the printed MCP client configuration. */
  clientName: string;
  /** Extra `label url` lines after the MCP endpoints (paths relative to the base URL). */
  links?: [label: string, path: string][];
  staticHandler?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
  /** Connection limits (config file `http` section). */
  http?: {
    headersTimeoutMs?: number;
    requestTimeoutMs?: number;
    maxConnectionsPerAddress?: number;
    sessionIdleMs?: number;
  };
  /** `--tool-names`: how MCP tools are named in `tools/list`. */
  toolNames?: ToolNames;
  /** `approvals.waitSeconds`, in ms. */
  approvalWaitMs?: number | undefined;
  /**
   * `--public-url`: the address the owner opens (behind a proxy); it sets the
   * passkeys' relying party (RP ID and origin). Default: `http://localhost:<port>`
   * on a loopback bind (an IP literal cannot be an RP ID).
   */
  publicUrl?: string | undefined;
  /** `--run-as USER`: after binding, the data folder becomes USER's and the process drops to USER. */
  runAs?: RunAs | undefined;
  /** `--metrics-port`: `/metrics` without a token on 127.0.0.1 at this port (0: any free one). */
  metricsPort?: number | null;
  /** `tools.listBudgetTokens`: the whole `/mcp` `tools/list` budget. */
  listBudgetTokens?: number | undefined;
  /** The config file's `notify` section, its webhook URLs already checked. */
  notify?: NotifyConfig;
  /** The config file's `oauth` section (authority.md §7); `enabled: false` turns OAuth off. */
  oauth?: OAuthConfig | undefined;
  /** openapi mounts and `--allow-self`: a door pointed at this server is refused unless allowed. */
  selfTargets?: Pick<SelfTargetCheck, 'mounts' | 'allowSelf'>;
}

/** The banner's word on tool names, when some host would refuse the exact ones. */
function toolNamesLine(workspace: Workspace, names: ToolNames): string[] {
  const exact = workspace.mounts.flatMap((m) => workspace.kernel.tools(m).map((t) => t.name));
  const unportable = exact.filter((n) => !PORTABLE_TOOL_NAME.test(n));
  if (names === 'portable')
    return unportable.length > 0
      ? [
          `portable (${portableToolName(unportable[0]!)}, …): every host accepts them; rules and the audit keep the exact names`,
        ]
      : [];
  return unportable.length > 0
    ? [
        `exact (${unportable[0]}, …); Claude Desktop, claude.ai, OpenAI and Copilot need --tool-names portable`,
      ]
    : [];
}

/** The config file's `oauth` section. */
export interface OAuthConfig extends OAuthSettings {
  enabled?: boolean;
}

/**
 * What the owner reads at start: the endpoints, the sign-in line (after any
 * metrics line) and ready-to-paste MCP client configurations.
 */
function startupText(
  o: HttpServeOptions,
  base: string,
  signIn: string[],
  agentToken: string | null | undefined,
): string {
  const bearer = agentToken ?? '<agent token: airlock agents add NAME>';
  const pad = (label: string) => `  ${label}${' '.repeat(Math.max(1, 17 - label.length))}`;
  return [
    o.title,
    `${pad('MCP (all doors)')}${base}/mcp`,
    ...o.workspace.mounts.map((m) => `${pad(`MCP (${m})`)}${base}/mcp/${m}`),
    ...(o.links ?? []).map(([label, path]) => `${pad(label)}${base}${path}`),
    ...o.workspace.kernel
      .doors()
      .flatMap((d) => (d.http?.banner?.() ?? []).map((line) => `  ${line}`)),
    ...toolNamesLine(o.workspace, o.toolNames ?? 'exact').map(
      (line) => `${pad('Tool names')}${line}`,
    ),
    ...signIn,
    '',
    `MCP client configuration over HTTP (agent ${agentToken ? DEFAULT_AGENT : '…'}; paste into your client):`,
    JSON.stringify(
      {
        mcpServers: {
          [o.clientName]: {
            type: 'http',
            url: `${base}/mcp`,
            headers: { Authorization: `Bearer ${bearer}` },
          },
        },
      },
      null,
      2,
    ),
    '',
    'MCP client configuration over stdio (the client spawns Airlock):',
    JSON.stringify(
      {
        mcpServers: {
          [o.clientName]: {
            command: process.execPath,
            args: [BIN_PATH, ...o.stdioArgs, '--data', o.workspace.data],
          },
        },
      },
      null,
      2,
    ),
    `  (a spawned stdio process asks the owner through this folder: keep this server running and approve in its web UI, or with \`airlock approvals --data ${o.workspace.data}\`)`,
    '',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

/** Webhooks, Web Push and email for the owner's asks, linking the cards at `uiBase`. */
function startNotifications(
  workspace: Workspace,
  logger: Logger,
  notify: NotifyConfig | undefined,
  uiBase: string,
) {
  return startNotifier({
    store: workspace.store,
    events: workspace.kernel.events,
    logger,
    config: notify ?? {},
    origin: uiBase,
    sources: [
      pushSource({ store: workspace.store, origin: uiBase, allowPrivate: notify?.allowPrivate }),
      ...(notify?.smtp ? [emailSource(notify.smtp)] : []),
    ],
    // An ask of a rule marked `urgent` passes quiet hours (authority.md §6.3).
    urgent: async (notice) => {
      const rule = notice.about['rule'];
      if (!rule) return false;
      const view = await workspace.kernel.policy.view();
      return view.rules.some((r) => r.id === rule && r.urgent === true);
    },
  });
}

export async function serveHttpUntilSignal(o: HttpServeOptions): Promise<number> {
  // Listening for SIGINT/SIGTERM from the start: one that arrives while the
  // server starts (a supervisor that gave up) still shuts it down cleanly,
  // server record removed, instead of the default action killing it mid-way.
  const stopped = untilSignal();
  const { workspace, logger, host, port } = o;
  const { principals } = workspace.kernel;
  const credentials = await ensureCredentials(principals, workspace.data, {
    agentToken: o.agentToken,
    logger,
  });
  const inbox: { origin?: string } = {};
  // The notifier starts once the address is known; its routes reach it then.
  const notifyControl: NotifyControl = { config: o.notify ?? {} };
  const oauth =
    o.oauth?.enabled === false
      ? undefined
      : createOAuthServer({ kernel: workspace.kernel, logger, settings: o.oauth ?? {} });
  const app = createHttpApp({
    oauth,
    notify: notifyControl,
    kernel: workspace.kernel,
    logger,
    allowAnonymous: o.allowAnonymous,
    mcp: {
      ...(o.toolNames ? { toolNames: o.toolNames } : {}),
      ...(o.approvalWaitMs ? { approvalWaitMs: o.approvalWaitMs } : {}),
      ...(o.listBudgetTokens ? { listBudgetTokens: o.listBudgetTokens } : {}),
      // The address printed below, once listening: every ask carries its card's link.
      approvalLink: async (id) => (inbox.origin ? approvalUrl(inbox.origin, id) : undefined),
    },
    allowedHosts: [
      ...(isLoopbackHost(host) ? [] : [host]),
      ...(o.publicUrl ? [new URL(o.publicUrl).hostname] : []),
    ],
    ...(o.publicUrl ? { allowedOrigins: [new URL(o.publicUrl).origin] } : {}),
    passkeys: workspace.passkeys,
    ...(o.http ?? {}),
    ...(o.staticHandler ? { staticHandler: o.staticHandler } : {}),
    ...(workspace.metrics ? { metrics: workspace.metrics.prometheus } : {}),
    ...(workspace.tracing ? { tracer: workspace.tracing.requests } : {}),
  });
  workspace.metrics?.countSessions(app.sessions);
  let address;
  try {
    address = await app.listen(port, host);
  } catch (error) {
    await workspace.close();
    throw new Error(`cannot listen on ${host}:${port}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (o.selfTargets) {
    try {
      checkSelfTargets({
        ...o.selfTargets,
        host,
        port: address.port,
        ownerToken: credentials.ownerToken ?? null,
      });
    } catch (error) {
      await app.close();
      await workspace.close();
      throw error;
    }
  }
  let metricsServer: Server | undefined;
  let metricsLine: string[] = [];
  if (o.metricsPort !== undefined && o.metricsPort !== null && workspace.metrics) {
    try {
      metricsServer = await listenMetrics(workspace.metrics.prometheus, o.metricsPort, logger);
    } catch (error) {
      await app.close();
      await workspace.close();
      throw new Error(
        `cannot listen on 127.0.0.1:${o.metricsPort} for metrics: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    const { port: shown } = metricsServer.address() as AddressInfo;
    metricsLine = [`  Metrics          http://127.0.0.1:${shown}/metrics`];
  }
  const shownHost = address.address.includes(':') ? `[${address.address}]` : address.address;
  // The page is linked as localhost on a loopback bind: WebAuthn accepts it as a secure
  // context, and an IP literal cannot be a passkey's RP ID (issue 25).
  const base = isLoopbackHost(address.address)
    ? `http://localhost:${address.port}`
    : `http://${shownHost}:${address.port}`;
  const ui = o.publicUrl ? new URL(o.publicUrl) : new URL(base);
  workspace.passkeys.setRelyingParty({ id: ui.hostname, origin: ui.origin });
  // The issuer and the resources are the address the owner and clients reach.
  await oauth?.start(ui.origin, { proxy: !!o.publicUrl });
  const uiBase = ui.origin + ui.pathname.replace(/\/$/, '');
  // Approval links open the inbox where the passkey works.
  inbox.origin = uiBase;
  // Webhooks link the cards at the same address (authority.md §6).
  // …and Web Push to every device the owner turned notifications on for.
  const notifier = startNotifications(workspace, logger, o.notify, uiBase);
  notifyControl.notifier = notifier;
  writeServerRecord(workspace.data, uiBase);
  // The one-time sign-in link goes to a terminal only (issue 25): never into a log file
  // or a pipe another process reads. It dies at first use or after 10 minutes.
  const passkey = await principals.hasPasskey();
  const login =
    credentials.ownerToken && !passkey && process.stdout.isTTY
      ? `${uiBase}/login#code=${await principals.issueLoginCode()}`
      : null;
  const signInLine = passkey
    ? `Owner sign-in    ${uiBase}/   (with your passkey)`
    : login
      ? `Owner sign-in    ${login}   (once, within 10 minutes; or paste ${join(workspace.data, OWNER_TOKEN_FILE)})`
      : credentials.ownerToken
        ? `Owner sign-in    ${uiBase}/   (or paste ${join(workspace.data, OWNER_TOKEN_FILE)}; a one-time link: run \`airlock owner link --data ${workspace.data}\` in a terminal)`
        : 'Owner sign-in    with the owner token of the instance that created this store';
  // Bound, credentials and the server record written: hand the data folder to the user,
  // then become it (issue 25).
  if (o.runAs) {
    dropPrivileges(workspace.data, o.runAs);
    logger.info({ user: o.runAs.user, uid: o.runAs.uid }, 'running as an unprivileged user');
  }
  process.stdout.write(
    startupText(o, base, [...metricsLine, '', signInLine], credentials.agentToken),
  );
  await stopped;
  removeServerRecord(workspace.data);
  logger.info('shutting down');
  app.server.close();
  metricsServer?.close();
  await notifier.close();
  await workspace.close();
  await app.close();
  return 0;
}

/**
 * `--metrics-port`: `/metrics` alone, on loopback, without a token (a
 * scraper on this machine); the Host guard keeps pages on other origins out.
 */
function listenMetrics(
  prometheus: () => Promise<string>,
  port: number,
  logger: Logger,
): Promise<Server> {
  const server = createServer((req, res) => {
    const guarded = checkHostAndOrigin(req, { allowedHosts: [], allowedOrigins: [] });
    if (
      !guarded.ok ||
      req.method !== 'GET' ||
      new URL(req.url ?? '/', 'http://l').pathname !== '/metrics'
    ) {
      res.writeHead(guarded.ok ? 404 : guarded.status, { 'content-type': 'text/plain' });
      res.end(guarded.ok ? 'GET /metrics\n' : `${guarded.message}\n`);
      return;
    }
    sendMetrics(res, prometheus).catch((err: unknown) => {
      logger.error({ err }, 'metrics collection failed');
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
