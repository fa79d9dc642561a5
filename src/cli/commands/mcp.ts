/**
 * The mcp door on the command line (spec/gateway.md "Configuration"):
 * `--upstream NAME=COMMAND…` / `--upstream NAME=https://…/mcp` and
 * `--upstream-header NAME:'Header: value'` for `airlock serve` and
 * `airlock stdio`, and `airlock mcp NAME=COMMAND…`, which serves upstreams
 * alone over stdio (default) or HTTP (`--port`).
 */
import { parse, intOption, UsageError } from '../args.js';
import { createProcessLogger } from '../logger.js';
import {
  buildWorkspace,
  checkAnonymous,
  serveStdioUntilSignal,
  SERVING_OPTIONS,
} from '../workspace/command-workspace.js';
import { readConfig } from '../config/config-file.js';
import { configLimits, listBudgetOf } from '../config/config-check.js';
import { serveHttpUntilSignal } from '../server/http-serve.js';
import {
  parseHeaderFlag,
  parseUpstreamFlag,
  UpstreamConfigError,
  type UpstreamInput,
} from '../../doors/mcp/config.js';

export const UPSTREAM_OPTIONS = {
  upstream: { type: 'string', multiple: true },
  'upstream-header': { type: 'string', multiple: true },
} as const;

export const UPSTREAM_HELP = `  --upstream NAME=CMD put an existing MCP server behind Airlock (repeatable): NAME=COMMAND
                     ARGS… is spawned over stdio and supervised (restarted with backoff);
                     NAME=https://host/mcp is reached over streamable HTTP. Its tools are
                     served as NAME_<tool>, its resources as NAME+<uri>, its prompts as
                     NAME_<prompt>. NAME: a letter, then letters, digits or - (no _).
  --upstream-header NAME:'Header: value'
                     a header for an HTTP upstream (repeatable); \${VAR} in the value is
                     read from the environment and scrubbed from every result`;

/**
 * The upstreams the flags name, in the config file's shape. A header for a
 * name the flags do not give applies to that name's entry in the config file.
 */
export function upstreamsFromFlags(
  flags: string[] | undefined,
  headerFlags: string[] | undefined,
  config: Record<string, unknown>,
): Record<string, UpstreamInput> | undefined {
  if (!flags?.length && !headerFlags?.length) return undefined;
  try {
    const upstreams: Record<string, UpstreamInput> = {};
    for (const flag of flags ?? []) {
      const [name, upstream] = parseUpstreamFlag(flag);
      if (upstreams[name]) throw new UpstreamConfigError(`--upstream ${name} given twice`);
      upstreams[name] = upstream;
    }
    const fromFile = (config.upstreams ?? {}) as Record<string, UpstreamInput>;
    for (const flag of headerFlags ?? []) {
      const [name, header, value] = parseHeaderFlag(flag);
      const target = upstreams[name] ?? (fromFile[name] ? { ...fromFile[name] } : undefined);
      if (!target || !('url' in target))
        throw new UpstreamConfigError(
          `--upstream-header ${name}: no HTTP upstream named ${name}; give --upstream ${name}=https://…/mcp first`,
        );
      target.headers = { ...target.headers, [header]: value };
      upstreams[name] = target;
    }
    return upstreams;
  } catch (error) {
    if (error instanceof UpstreamConfigError) throw new UsageError(error.message);
    throw error;
  }
}

export const MCP_HELP = `Usage: airlock mcp NAME=COMMAND… [options]
       airlock mcp NAME=https://host/mcp [--upstream-header NAME:'Header: value'] [options]

Serves existing MCP servers ("upstreams") behind Airlock's kernel, alone: every
call gets the owner's policy (destructive tools ask first), limits, audit,
secret scrubbing and, with an operationID, idempotency. MCP is served over
stdio (for clients that spawn servers) unless --port is given.

Examples:
  airlock mcp fs="npx -y @modelcontextprotocol/server-filesystem /home/me/notes"
  airlock mcp gh=https://api.example.com/mcp --upstream-header gh:'Authorization: Bearer \${GH_TOKEN}' --port 7310

Each NAME=… is one upstream (spawned over stdio and supervised, or reached over
streamable HTTP); its tools are served as NAME_<tool>. A tool's effect comes
from its annotations (readOnlyHint → read; destructiveHint false → write;
otherwise destructive); override it per tool in the config file:
  {"upstreams": {"fs": {"command": "npx", "args": ["-y", "…", "/tmp"],
    "tools": {"write_file": {"effect": "write"}},
    "secrets": ["FS_TOKEN"], "start": "lazy"}}}
(secrets: environment variables whose values are scrubbed from results; start:
eager connects at start, lazy at the first call, with the tools listed last time.)
The owner approves asks with 'airlock approvals' or in the web UI (--port).

Options:
  --upstream-header NAME:'Header: value'
                     a header for an HTTP upstream (repeatable); \${VAR} is read from
                     the environment and scrubbed from every result
  --config FILE      JSON with "upstreams" (as above) and "policy", "limits"
  --port N           serve HTTP on this port instead of stdio (MCP at /mcp, web UI at /)
  --host H, --token T, --allow-anonymous
                     as for airlock serve (HTTP mode)
  --data DIR         data folder (default ./.airlock)
  -h, --help         this help

Exit codes: 0 clean shutdown, 2 bad arguments or configuration, 1 other errors.`;

export async function mcpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse({
    args: argv,
    allowPositionals: true,
    options: {
      'upstream-header': { type: 'string', multiple: true },
      config: { type: 'string' },
      ...SERVING_OPTIONS,
    },
  });
  if (values.help) {
    process.stdout.write(MCP_HELP + '\n');
    return 0;
  }
  const config = readConfig(values.config);
  const upstreams = upstreamsFromFlags(positionals, values['upstream-header'], config);
  if (!upstreams && config.upstreams === undefined)
    throw new UsageError(
      "mcp needs at least one NAME=COMMAND or NAME=https://…/mcp (or upstreams in --config); run 'airlock mcp --help'",
    );
  const http = values.port !== undefined;
  const port = intOption('port', values.port, 7300, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  const allowAnonymous = values['allow-anonymous'] === true;
  if (http) checkAnonymous(host, allowAnonymous);
  // The door mounts once per upstream, under its name.
  const limits = configLimits(config, [
    ...Object.keys((config.upstreams as Record<string, unknown> | undefined) ?? {}),
    ...Object.keys(upstreams ?? {}),
  ]);
  const logger = createProcessLogger();
  const workspace = await buildWorkspace({
    data: values.data ?? './.airlock',
    doors: ['mcp'],
    logger,
    limits,
    config,
    ...(upstreams ? { upstreams } : {}),
    owner: !http,
  });
  if (!http) {
    const budget = listBudgetOf(config);
    return serveStdioUntilSignal(workspace, logger, budget ? { listBudgetTokens: budget } : {});
  }
  return serveHttpUntilSignal({
    workspace,
    logger,
    host,
    port,
    agentToken: values.token ?? process.env.AIRLOCK_TOKEN,
    allowAnonymous,
    listBudgetTokens: listBudgetOf(config),
    stdioArgs: ['mcp', ...positionals],
    title: `Airlock is serving the upstreams ${workspace.mounts.join(', ')}`,
    clientName: 'airlock',
    links: [
      ['REST API', '/api/v1'],
      ['Upstreams', '/api/v1/upstreams'],
      ['Health', '/healthz'],
    ],
  });
}
