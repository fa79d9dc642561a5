/**
 * MCP over stdio for a workspace's doors (spec/kernel.md §11): the process is
 * the connection (§4), so a restart is a new one. Serves until SIGINT/SIGTERM
 * or until the client closes stdin; only protocol messages reach stdout.
 * Task status notifications (SEP-2663) on `subscriptions/listen` are served
 * at the wire (mcp-task-listen-stdio.ts).
 */
import { randomUUID } from 'node:crypto';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createMcpServer, type McpServing } from './mcp-server.js';
import { withTaskListen } from './tasks/mcp-task-listen-stdio.js';
import { withRequestSpans } from './mcp-stdio-trace.js';
import type { McpRequestTracer } from './mcp-trace.js';
import type { Logger } from '../../kernel/logger.js';
import type { ServingKernel } from '../surface.js';
import { agentPart } from '../../kernel/connection.js';

export async function serveOverStdio(
  kernel: ServingKernel,

  mounts: string[],
  logger: Logger,
  until: Promise<void>,
  { tracer, ...serving }: McpServing & { tracer?: McpRequestTracer | undefined } = {},
): Promise<void> {
  // stdio has one client per process: the agent is `stdio:<clientInfo.name>` (authority.md §1).
  const processId = randomUUID();
  const lastClient: { name?: string } = {};
  const stdio = new StdioServerTransport();
  const spans = tracer ? withRequestSpans(stdio, tracer) : null;
  const handle = serveStdio(
    () =>
      createMcpServer({
        kernel,
        mounts,
        ...serving,
        requestContext: spans?.within,
        identify: ({ clientName }) => {
          lastClient.name = clientName ?? 'client';
          return stdioConnection(processId, clientName);
        },
      }),
    {
      // A listen that asks for taskIds is served at the wire (the SDK's router drops them).
      transport: withTaskListen(spans?.wire ?? stdio, {
        kernel,
        logger,
        agentOf: (clientName) => stdioConnection(processId, clientName).agent,
      }),
      onerror: (err) => logger.warn({ err: err.message }, 'stdio error'),
    },
  );
  const stdinClosed = new Promise<void>((resolve) =>
    process.stdin.once('close', resolve).once('end', resolve),
  );
  await Promise.race([until, stdinClosed]);
  await handle.close();
  // This process was the connection: what it asked for ends with it.
  if (lastClient.name !== undefined)
    await kernel.consent
      .endConnection(stdioConnection(processId, lastClient.name).id)
      .catch(() => undefined);
}

/** The connection of a stdio process whose client calls itself `clientName`. */
export function stdioConnection(processId: string, clientName: string | undefined) {
  const agent = `stdio:${clientName ?? 'client'}`;
  return {
    id: `${agentPart(agent)}/process:${processId}`,
    kind: 'stdio' as const,
    agent,
    session: processId,
  };
}
