/**
 * The relay as a library and a process, WU-style (`airlock/page`): an MCP
 * server with the 18 `wu_*` tools over one `Puente`, its page door mounted
 * in the workspace `serve`, `stdio` and `mcp` open (cli/workspace/command-workspace.ts
 * `buildWorkspace`). Importing this module starts nothing and loads no other
 * door: the builder is imported when the first transport connects. `main(env)`
 * starts the listener and MCP over stdio. Tool calls pass the kernel
 * pipeline (validation, policy, limits, audit), kept in a throw-away SQLite
 * folder unless `data` is given.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import type { Transport } from '@modelcontextprotocol/server';
import type { Kernel } from '../kernel/kernel.js';
import type { PolicyConfig } from '../kernel/authority/policy.js';
import { silentLogger } from '../kernel/logger.js';
import type { ServedDoor, ToolResult } from '../transport/surface.js';
import { defaultPresenter } from '../transport/mcp/present.js';
import type { Workspace } from '../cli/workspace/workspace.js';
import { createMcpServer as createKernelMcpServer } from '../transport/mcp/mcp-server.js';
import { stdioConnection } from '../transport/mcp/mcp-stdio.js';
import { loadConfig, type RelayConfig } from '../doors/page/config.js';
import { Puente } from '../doors/page/puente.js';
import { createPageDoor, relayUrl } from '../doors/page/door.js';
import { pagePresenter } from '../doors/page/presenter.js';
import { relayFailure, scrubSecret } from '../doors/page/command.js';

export interface WuMcpServer {
  /** Serves the tools over `transport` (either MCP protocol era). */
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

export interface McpServerOptions {
  /** Folder for the kernel's audit, journal, approvals and policy (default: a temporary one, removed on close). */
  data?: string;
  /** The owner's policy rules from a config file (authority.md §3). */
  policy?: PolicyConfig | undefined;
  /** Runs once the kernel is up (the CLI makes the folder's owner token here). */
  ready?: (kernel: Kernel<ServedDoor>) => Promise<void>;
}

/**
 * An MCP server with the 18 `wu_*` tools over `puente`. The host owns the
 * `Puente`: close both (closing one does not close the other).
 *
 * @example
 * const puente = await new Puente(config).ready();
 * const server = createMcpServer(puente, config);
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(
  puente: Puente,
  config: RelayConfig,
  options: McpServerOptions = {},
): WuMcpServer {
  const door = createPageDoor({ config, puente, web: false });
  const ownsData = options.data === undefined;
  const data = options.data ?? mkdtempSync(join(tmpdir(), 'airlock-relay-'));
  let opened: Promise<Workspace> | undefined;
  const handles: StdioServerHandle[] = [];
  const open = () =>
    (opened ??= (async () => {
      const { buildWorkspace } = await import('../cli/workspace/command-workspace.js');
      const workspace = await buildWorkspace({
        data,
        doors: [],
        built: [door],
        logger: silentLogger,
        config: options.policy === undefined ? {} : { policy: options.policy },
      });
      await options.ready?.(workspace.kernel);
      return workspace;
    })());
  return {
    async connect(transport) {
      const { kernel, mounts } = await open();
      const id = randomUUID();
      handles.push(
        serveStdio(
          () =>
            createKernelMcpServer({
              kernel,
              mounts,
              identify: ({ clientName }) => stdioConnection(id, clientName),
            }),
          { transport },
        ),
      );
    },
    async close() {
      await Promise.all(handles.splice(0).map((h) => h.close()));
      // A workspace that failed to open has released what it held.
      if (opened)
        await opened.then(
          (w) => w.close(),
          () => undefined,
        );
      if (ownsData) rmSync(data, { recursive: true, force: true });
    },
  };
}

/** The MCP result of one bridge command: what `createCommandRunner` resolves to. */
export type WuMcpToolResult = ToolResult;

/**
 * `(commandName, params?) => Promise<WuMcpToolResult>`: sends a bridge command
 * (`list_actions`, not `wu_list_actions`) and adapts the answer. `isError`
 * is set when the page answers an error or the transport fails; an action
 * that ran and returned `success: false` is not an error.
 */
export function createCommandRunner(
  puente: Puente,
): (command: string, params?: Record<string, unknown>) => Promise<WuMcpToolResult> {
  return async (command, params = {}) => {
    const tool = { name: `wu_${command}` } as Parameters<typeof pagePresenter.success>[0];
    try {
      const result = scrubSecret(await puente.enviar(command, params), puente.config.token);
      return pagePresenter.success(tool, result ?? null, defaultPresenter) as ToolResult;
    } catch (error) {
      return pagePresenter.failure(tool, relayFailure(error), defaultPresenter) as ToolResult;
    }
  };
}

export interface RelayHandle {
  puente: Puente;
  server: WuMcpServer;
  /** Resolves once everything is closed (after a signal or `close()`). */
  closed: Promise<void>;
  close(): Promise<void>;
}

const stderr = (line: string) => process.stderr.write(`airlock relay: ${line}\n`);

/** Starts the relay: listener, tools, MCP over stdio. Used by `main` and `airlock relay`. */
export async function startRelay(
  env: NodeJS.ProcessEnv,
  transport?: Transport,
  options: McpServerOptions = {},
): Promise<RelayHandle> {
  const config = loadConfig(env);
  const puente = new Puente(config, {
    logger: {
      error: (...a) => stderr(a.map(String).join(' ')),
      info: (...a) => stderr(a.map(String).join(' ')),
    },
  });
  try {
    await puente.ready();
  } catch (error) {
    await puente.close().catch(() => undefined);
    throw new Error(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const server = createMcpServer(puente, config, options);
  const { StdioServerTransport } = await import('@modelcontextprotocol/server/stdio');
  await server.connect(transport ?? new StdioServerTransport());
  const port = puente.address()?.port ?? config.port;
  stderr(
    `bridge listener on ${relayUrl(config, port)}${config.token === null ? ' (insecure: no token)' : ''}; MCP on stdio`,
  );
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await server.close().catch((e: Error) => stderr(`close: ${e.message}`));
      await puente.close();
      resolveClosed();
    })());
  return { puente, server, closed, close };
}

/**
 * Starts the relay from `env` (the `WU_MCP_*` variables): creates the
 * listener, waits for it, registers the tools, connects stdio, and closes
 * everything on SIGINT/SIGTERM. Resolves once started.
 *
 * @example
 * await main(process.env);
 */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const handle = await startRelay(env);
  const stop = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    void handle.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
