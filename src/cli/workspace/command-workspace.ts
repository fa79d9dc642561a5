/**
 * The one workspace builder behind the commands that serve doors (`serve`,
 * `stdio`, `mcp`, `openapi`): which doors and limits the flags and the config
 * file ask for, the workspace opened with them, the owner's credentials and
 * the tool names checked, and serving over stdio until a signal. Each command
 * passes only what sets it apart as options.
 */
import { listOption, intOption, UsageError } from '../args.js';
import {
  ApprovalsSchema,
  configLimits,
  JobsSchema,
  OpenApiMountsSchema,
} from '../config/config-check.js';
import { ensureOwner } from './credentials.js';
import { availableDoors } from './doors.js';
import { upstreamsFromFlags } from '../commands/mcp.js';
import { untilSignal } from '../signals.js';
import { openWorkspace, type Workspace, type WorkspaceOptions } from './workspace.js';
import type { OpenApiMount } from '../../doors/context.js';
import { DEFAULT_PREFIX } from '../../doors/openapi/config.js';
import type { Logger } from '../../kernel/logger.js';
import { isLoopbackHost } from '../../transport/http/guards.js';
import { servedTools } from '../../transport/mcp/mcp-server.js';
import { serveOverStdio } from '../../transport/mcp/mcp-stdio.js';
import type { ToolNames } from '../../transport/mcp/tool-names.js';

type Config = Record<string, unknown>;

/** A config file value as a flag's string (`"doors": ["a", "b"]` → `a,b`). */
export const str = (v: unknown) =>
  typeof v === 'string'
    ? v
    : typeof v === 'number'
      ? String(v)
      : Array.isArray(v)
        ? v.join(',')
        : undefined;

/** The flags `mcp` and `openapi` share: where to serve (HTTP with `--port`) and the data folder. */
export const SERVING_OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  token: { type: 'string' },
  'allow-anonymous': { type: 'boolean' },
  data: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `--relay-port` or `relayPort` in the config file: the page door's relay port. */
export function relayPortOption(flag: string | undefined, config: Config): number {
  return intOption('relay-port', flag ?? str(config.relayPort), 19100, 0, 65535);
}

/** `--allow-anonymous` is refused on a bind reachable beyond this machine. */
export function checkAnonymous(host: string, allowAnonymous: boolean): void {
  if (!isLoopbackHost(host) && allowAnonymous)
    throw new UsageError(
      `--allow-anonymous is for loopback binds only; --host ${host} is reachable beyond this machine, so every agent needs its token`,
    );
}

/** The flags `serve` and `stdio` share that choose the doors. */
export interface DoorFlags {
  doors?: string | undefined;
  upstream?: string[] | undefined;
  'upstream-header'?: string[] | undefined;
}

/** The doors, upstreams and per-door limits a workspace is opened with. */
export interface DoorPlan {
  doors: string[];
  upstreams: WorkspaceOptions['upstreams'];
  limits: WorkspaceOptions['limits'];
}

/**
 * Names a `limits` key may have: the mount of a door of this build (the
 * openapi and mcp doors mount under their prefixes and upstream names).
 */
function mountNames(
  config: Config,
  openapi: readonly OpenApiMount[],
  upstreams: Record<string, unknown> | undefined,
): string[] {
  const fromConfig = config.openapi === undefined ? [] : OpenApiMountsSchema.parse(config.openapi);
  return [
    ...availableDoors().filter((d) => d !== 'openapi' && d !== 'mcp'),
    ...[...openapi, ...fromConfig].map((m) => m.prefix ?? DEFAULT_PREFIX),
    ...Object.keys((config.upstreams as Record<string, unknown> | undefined) ?? {}),
    ...Object.keys(upstreams ?? {}),
  ];
}

/**
 * `--doors` (or `doors` in the config file, else `defaults`), plus the
 * openapi door when there are openapi mounts and the mcp door when there are
 * upstreams; then the config file's `limits`, checked against those mounts.
 */
export function planDoors(
  flags: DoorFlags,
  config: Config,
  defaults: string[],
  openapi: OpenApiMount[] = [],
): DoorPlan {
  const doors = listOption(flags.doors ?? str(config.doors)) ?? defaults;
  if (openapi.length > 0 && !doors.includes('openapi')) doors.push('openapi');
  const upstreams = upstreamsFromFlags(flags.upstream, flags['upstream-header'], config);
  if ((upstreams || config.upstreams !== undefined) && !doors.includes('mcp')) doors.push('mcp');
  const limits = configLimits(config, mountNames(config, openapi, upstreams));
  return { doors, upstreams, limits };
}

/** `approvals.orphanMinutes`: how long an ask stays after its connection ended, in ms. */
function configOrphanMs(config: Config): number | undefined {
  const minutes =
    config.approvals === undefined
      ? undefined
      : ApprovalsSchema.parse(config.approvals).orphanMinutes;
  return minutes === undefined ? undefined : minutes * 60_000;
}

/**
 * The config file's `jobs` section: `{"leaseMs": 30000}`, how long a job
 * whose instance stopped heartbeating stays `running` before another
 * instance fails it `interrupted` (scale-out).
 */
function configJobLease(config: Config): number | undefined {
  return config.jobs === undefined ? undefined : JobsSchema.parse(config.jobs).leaseMs;
}

/** The flags `serve` and `stdio` share that say where state lives. */
export interface StoreFlags {
  data?: string | undefined;
  store?: string | undefined;
  bus?: string | undefined;
}

/** The data folder: `--data`, else `data` in the config file, else `./.airlock`. */
export const dataOption = (flag: string | undefined, config: Config) =>
  flag ?? str(config.data) ?? './.airlock';

/**
 * Where state lives and how instances share it, from the flags and the
 * config file: data folder, store, bus, the job lease and how long an
 * orphaned ask stays (`serve` and `stdio`; `mcp` and `openapi` keep the
 * defaults).
 */
export function storeSettings(
  flags: StoreFlags,
  config: Config,
): Pick<WorkspaceOptions, 'data' | 'store' | 'bus' | 'jobLeaseMs' | 'approvalOrphanMs'> {
  return {
    data: dataOption(flags.data, config),
    store: flags.store ?? str(config.store),
    bus: flags.bus ?? str(config.bus),
    jobLeaseMs: configJobLease(config),
    approvalOrphanMs: configOrphanMs(config),
  };
}

export interface BuildOptions extends WorkspaceOptions {
  /**
   * Makes sure the owner has credentials in the data folder (a process served
   * over stdio: the owner answers its approvals from the CLI on that folder).
   */
  owner?: boolean;
  /**
   * Builds every endpoint's tool list, named this way, once at start: two
   * tools listed under one name (only possible with portable names) is exit 2
   * now, not a failure at an agent's first request.
   */
  toolNames?: ToolNames;
}

/** Opens the workspace, then the owner's credentials and the tool-name check, as asked. */
export async function buildWorkspace(o: BuildOptions): Promise<Workspace> {
  const { owner, toolNames, ...options } = o;
  const workspace = await openWorkspace(options);
  if (owner) await ensureOwner(workspace.kernel.principals, workspace.data, o.logger);
  if (toolNames) await checkToolNames(workspace, toolNames);
  return workspace;
}

async function checkToolNames(workspace: Workspace, names: ToolNames): Promise<void> {
  try {
    servedTools(workspace.kernel, workspace.mounts, names);
    for (const mount of workspace.mounts) servedTools(workspace.kernel, [mount], names);
  } catch (error) {
    await workspace.close();
    throw new UsageError((error as Error).message);
  }
}

/** Serves the workspace's doors over MCP stdio until a signal or the client's end, then closes it. */
export async function serveStdioUntilSignal(
  workspace: Workspace,
  logger: Logger,
  options?: Parameters<typeof serveOverStdio>[4],
): Promise<number> {
  await serveOverStdio(workspace.kernel, workspace.mounts, logger, untilSignal(), options);
  await workspace.close();
  return 0;
}
