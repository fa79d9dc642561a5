/**
 * Door `mcp` (spec/gateway.md): any existing MCP server — spawned over stdio
 * or reached over streamable HTTP — behind the kernel, one door per upstream
 * (mount = its name). Every export here is a promise.
 */
import { join } from 'node:path';
import type { DoorContext } from '../context.js';
import type { ServedDoor } from '../../transport/surface.js';
import { DEFAULT_LIMITS, type Logger } from '../../kernel/index.js';
import {
  expandEnv,
  isStdio,
  parseUpstreams,
  UpstreamConfigError,
  type UpstreamConfig,
} from './config.js';
import { createGateway, type Gateway, type ResolvedUpstream } from './gateway.js';
import { createExtender, createPresenter, MCP_CAPABILITIES } from './surface.js';
import { upstreamRoutes, type OwnerAudit } from './rest.js';
import { connectRoutes } from './oauth/routes.js';
import { withMcpRequest } from './upstream/client-requests.js';

export {
  parseUpstreamFlag,
  parseHeaderFlag,
  splitCommand,
  parseUpstreams,
  UpstreamConfigError,
  type UpstreamConfig,
  type UpstreamInput,
} from './config.js';
export { createGateway, type Gateway, type UpstreamView, type ToolView } from './gateway.js';
export { annotatedEffect, effectFor } from './effects.js';
export { publishedName, claimName } from './naming.js';

/** A secret shorter than this would match ordinary text, so it is refused. */
export const MIN_SECRET_LENGTH = 4;

/** `${ENV}` expanded in env and header values; those values and the named `secrets` are scrubbed. */
export function resolveUpstream(
  name: string,
  config: UpstreamConfig,
  env: NodeJS.ProcessEnv,
): ResolvedUpstream {
  const secrets: string[] = [];
  const expandAll = (values: Record<string, string>, where: string) =>
    Object.fromEntries(
      Object.entries(values).map(([k, v]) => {
        const { value, used } = expandEnv(v, env, `upstreams.${name}.${where}.${k}`);
        secrets.push(...used);
        return [k, value];
      }),
    );
  const upstreamEnv = isStdio(config) ? expandAll(config.env, 'env') : {};
  const headers = isStdio(config) ? {} : expandAll(config.headers, 'headers');
  if (
    !isStdio(config) &&
    config.oauth &&
    Object.keys(headers).some((h) => /^authorization$/i.test(h))
  )
    throw new UpstreamConfigError(
      `upstreams.${name}: give either an Authorization header or oauth, not both (with oauth Airlock sends the token it holds)`,
    );
  // A pre-registered client's secret: `${VAR}` expanded, and scrubbed like every secret.
  const oauth =
    !isStdio(config) && config.oauth?.clientSecret
      ? (() => {
          const { value, used } = expandEnv(
            config.oauth.clientSecret,
            env,
            `upstreams.${name}.oauth.clientSecret`,
          );
          secrets.push(value, ...used);
          return { ...config.oauth, clientSecret: value };
        })()
      : undefined;
  for (const variable of config.secrets) {
    const value = env[variable];
    if (value === undefined)
      throw new UpstreamConfigError(
        `upstreams.${name}.secrets: environment variable ${variable} is not set; set it or remove it from secrets`,
      );
    secrets.push(value);
  }
  for (const value of secrets)
    if (value.length < MIN_SECRET_LENGTH)
      throw new UpstreamConfigError(
        `upstreams.${name}: a secret value is ${value.length} characters long; a secret needs at least ${MIN_SECRET_LENGTH}, or it cannot be told apart from ordinary text and kept out of results`,
      );
  return {
    name,
    config: oauth && !isStdio(config) ? { ...config, oauth } : config,
    env: upstreamEnv,
    headers,
    secrets,
  };
}

export interface McpDoorsOptions {
  upstreams: Record<string, UpstreamConfig>;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where a lazy upstream's last tool list is kept. */
  cacheDir?: string | undefined;
  /** The data folder (an OAuth upstream's key file). */
  dataDir?: string | undefined;
}

/** One door per upstream, all sharing one gateway (names, overrides, resources and prompts). */
export function createMcpDoorsFrom(options: McpDoorsOptions): {
  doors: ServedDoor[];
  gateway: Gateway;
} {
  const resolved = Object.entries(options.upstreams).map(([name, config]) =>
    resolveUpstream(name, config, options.env),
  );
  const gateway = createGateway({
    upstreams: resolved,
    logger: options.logger,
    cacheDir: options.cacheDir,
    dataDir: options.dataDir,
  });
  let limitsOf: (mount: string) => number = () => DEFAULT_LIMITS.responseBytes;
  let ownerAudit: OwnerAudit = async () => {
    throw new Error('the mcp door has not started; its routes answer once the server is up');
  };
  const extend = createExtender(gateway, () =>
    Math.min(...gateway.runtimes.map((rt) => limitsOf(rt.name))),
  );
  const doors = gateway.runtimes.map((rt, i): ServedDoor => ({
    name: 'mcp',
    mount: rt.name,
    targetForms: [`${rt.name}:<tool>`],
    get tools() {
      return rt.defs;
    },
    limits: { timeoutMs: 120_000 },
    mcp: {
      presenter: createPresenter(rt.name, rt.hasSecrets ? rt.scrub : null),
      capabilities: MCP_CAPABILITIES,
      compactTools: () => rt.compact,
      withMcpRequest,
      extendServer: extend(rt.name),
      instructions: `Tools named ${rt.name}${rt.separator}… come from the MCP server '${rt.name}' through Airlock: the owner's policy may ask them before a change runs (approvalRequired: wait and call again). Tools that change something take an optional operationID: reuse it when retrying so the change happens once.`,
    },
    http: {
      ...(i === 0
        ? {
            routes: [
              ...upstreamRoutes(gateway, (...a) => ownerAudit(...a)),
              ...connectRoutes(gateway, (...a) => ownerAudit(...a)),
            ],
          }
        : {}),
      banner: () => {
        const s = rt.upstream.status();
        return [
          `mcp upstream ${rt.name}: ${s.transport} ${s.target} (${s.state}, ${rt.defs.length} tools)`,
        ];
      },
    },
    async start(kernel) {
      limitsOf = (mount) => kernel.limits(mount)?.responseBytes ?? DEFAULT_LIMITS.responseBytes;
      ownerAudit = (tool, args, result) => kernel.audit.ownerAction(tool, 'mcp', args, result);
      await gateway.attach(kernel);
    },
    async stop() {
      await rt.upstream.stop();
    },
    status() {
      const s = rt.upstream.status();
      return {
        upstreams: [
          {
            name: rt.name,
            up: s.state === 'running',
            state: s.state,
            restarts: s.restarts,
            inFlight: rt.callers.size,
          },
        ],
      };
    },
    // A forwarded write lives in the upstream: settled from its task when it ran as one, else unknown (outcomes.ts).
    resolveOperation: (entry) => rt.outcomes.resolve(entry),
  }));
  return { doors, gateway };
}

/** The door factory: the config file's `upstreams` with the `--upstream` flags' (a flag wins by name). */
export async function createMcpDoors(ctx: DoorContext): Promise<ServedDoor[]> {
  const merged = {
    ...((ctx.config.upstreams as Record<string, unknown> | undefined) ?? {}),
    ...(ctx.upstreams ?? {}),
  };
  const upstreams = parseUpstreams(merged);
  return createMcpDoorsFrom({
    upstreams,
    env: ctx.env,
    logger: ctx.logger,
    cacheDir: join(ctx.data, 'mcp'),
    dataDir: ctx.data,
  }).doors;
}
