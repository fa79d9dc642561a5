/**
 * Serves an opened workspace over HTTP until SIGINT/SIGTERM: listens, prints
 * the URLs and a ready-to-paste MCP client configuration, then shuts down
 * cleanly (stop taking connections, let in-flight calls finish within the
 * kernel's grace, close the rest). Shared by `serve` and `openapi`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHttpApp } from '../transport/http-app.js';
import { isLoopbackHost } from '../transport/guards.js';
import type { Logger } from '../kernel/logger.js';
import type { Workspace } from './workspace.js';
import { untilSignal } from './signals.js';

export interface HttpServeOptions {
  workspace: Workspace;
  logger: Logger;
  host: string;
  port: number;
  token: string | undefined;
  /** First line of the start-up output. */
  title: string;
  /** Key of the server in the printed MCP client configuration. */
  clientName: string;
  /** Extra `label url` lines after the MCP endpoints (paths relative to the base URL). */
  links?: [label: string, path: string][];
  staticHandler?: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;
}

export async function serveHttpUntilSignal(o: HttpServeOptions): Promise<number> {
  const { workspace, logger, host, port, token } = o;
  const app = createHttpApp({
    kernel: workspace.kernel,
    logger,
    token,
    allowedHosts: isLoopbackHost(host) ? [] : [host],
    ...(o.staticHandler ? { staticHandler: o.staticHandler } : {}),
  });
  let address;
  try {
    address = await app.listen(port, host);
  } catch (error) {
    await workspace.close();
    throw new Error(`cannot listen on ${host}:${port}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const shownHost = address.address.includes(':') ? `[${address.address}]` : address.address;
  const base = `http://${shownHost}:${address.port}`;
  const clientConfig = {
    mcpServers: {
      [o.clientName]: {
        type: 'http',
        url: `${base}/mcp`,
        ...(token ? { headers: { Authorization: 'Bearer <your token>' } } : {}),
      },
    },
  };
  const pad = (label: string) => `  ${label}${' '.repeat(Math.max(1, 17 - label.length))}`;
  process.stdout.write(
    [
      o.title,
      `${pad('MCP (all doors)')}${base}/mcp`,
      ...workspace.mounts.map((m) => `${pad(`MCP (${m})`)}${base}/mcp/${m}`),
      ...(o.links ?? []).map(([label, path]) => `${pad(label)}${base}${path}`),
      ...workspace.kernel
        .doors()
        .flatMap((d) => (d.http?.banner?.() ?? []).map((line) => `  ${line}`)),
      '',
      'MCP client configuration (paste into your client):',
      JSON.stringify(clientConfig, null, 2),
      '',
      'Press Ctrl+C to stop.',
      '',
    ].join('\n'),
  );
  await untilSignal();
  logger.info('shutting down');
  app.server.close();
  await workspace.close();
  await app.close();
  return 0;
}
