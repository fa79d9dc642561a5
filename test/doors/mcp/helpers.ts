/**
 * A workspace with the mcp door over real upstream servers from npm (pinned
 * devDependencies), served over loopback HTTP, with the owner's REST routes
 * and agent MCP clients.
 */
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger, type Logger } from '../../../src/kernel/logger.js';
import { createMcpDoorsFrom, parseUpstreams, type Gateway } from '../../../src/doors/mcp/index.js';
import type { UpstreamInput } from '../../../src/doors/mcp/config.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { connectClient, type ConnectOptions } from '../../helpers/mcp-client.js';
import { agentHeaders, ownerHeaders } from '../../helpers/principals.js';
import type { KernelOptions } from '../../../src/kernel/kernel.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

/** The npm server's bin script, run with this Node (no npx, no network). */
export const serverBin = (pkg: 'filesystem' | 'memory' | 'everything') =>
  fileURLToPath(new URL(`../../../node_modules/.bin/mcp-server-${pkg}`, import.meta.url));

/** The SDK task upstream (v1 SDK tasks, a ledger file) of the crash tests. */
export const TASK_UPSTREAM = fileURLToPath(
  new URL('../../fixtures/mcp/task-upstream.mjs', import.meta.url),
);

export interface GatewayWorkspace {
  tk: TestKernel;
  app: HttpApp;
  gateway: Gateway;
  base: string;
  owner: Record<string, string>;
  /** A client of agent `name` on `/mcp` (or `/mcp/<path>`). */
  agent(name: string, options?: ConnectOptions & { path?: string }): Promise<Client>;
  rest(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json }>;
  close(): Promise<void>;
}

export async function gatewayWorkspace(
  upstreams: Record<string, UpstreamInput>,
  options: {
    env?: NodeJS.ProcessEnv;
    /** Where lazy upstreams' tool lists are kept (`<data>/mcp`). */
    cacheDir?: string;
    kernel?: Partial<Omit<KernelOptions, 'store' | 'blobs' | 'events' | 'logger'>>;
    /** Where the workspace keeps its data (the kernel's store, an OAuth upstream's key file). */
    dataDir?: string;
    /** Every logger of the workspace (door, kernel, HTTP app); silent by default. */
    logger?: Logger;
    /** The owner's headers of another instance on the same store (a new owner token would end its). */
    owner?: Record<string, string>;
  } = {},
): Promise<GatewayWorkspace> {
  const { doors, gateway } = createMcpDoorsFrom({
    upstreams: parseUpstreams(upstreams),
    env: options.env ?? process.env,
    logger: options.logger ?? silentLogger,
    cacheDir: options.cacheDir,
    dataDir: options.dataDir,
  });
  const tk = await testKernel(doors, {
    ...(options.kernel ?? {}),
    ...(options.dataDir ? { dir: options.dataDir } : {}),
    ...(options.logger ? ({ logger: options.logger } as object) : {}),
  });
  const app = createHttpApp({ kernel: tk.kernel, logger: options.logger ?? silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${addr.port}`;
  const owner = options.owner ?? (await ownerHeaders(tk.kernel));
  const clients: Client[] = [];
  return {
    tk,
    app,
    gateway,
    base,
    owner,
    async agent(name, connect = {}) {
      const headers = await agentHeaders(tk.kernel, name);
      const client = await connectClient(`${base}/mcp${connect.path ? `/${connect.path}` : ''}`, {
        name: `${name}-client`,
        ...connect,
        token: headers.authorization!.slice('Bearer '.length),
      });
      clients.push(client);
      return client;
    },
    async rest(method, path, body, headers = owner) {
      const res = await fetch(`${base}/api/v1/${path}`, {
        method,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Json };
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await app.close();
      // A data folder the caller gave is the caller's to keep (a restart test reopens it).
      if (options.dataDir) await tk.close();
      else await tk.dispose();
    },
  };
}

export interface CallResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string; [k: string]: unknown }>;
  structuredContent?: Json;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallResult> {
  return (await client.callTool({ name, arguments: args })) as unknown as CallResult;
}

/** The JSON of a failure's text (Airlock's `{code, message, …}`). */
export const errorOf = (r: CallResult): Json => JSON.parse(r.content[0]!.text!) as Json;
