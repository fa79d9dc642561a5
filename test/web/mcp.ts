/** An MCP client for the web UI tests: the agent whose requests the owner answers in the browser. */
import type { Client } from '@modelcontextprotocol/client';
import { connectClient } from '../helpers/mcp-client.js';
import { toolBody } from '../helpers/results.js';

export interface Agent {
  client: Client;
  /** Calls a tool and returns its JSON text content (the door's envelope or result) and isError. */
  call(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ body: Record<string, unknown>; isError: boolean }>;
  close(): Promise<void>;
}

export async function connectAgent(
  base: string,
  name: string,
  token?: string,
  path = '/mcp',
): Promise<Agent> {
  const client = await connectClient(new URL(path, base), { name, ...(token ? { token } : {}) });
  return {
    client,
    async call(tool, args = {}) {
      const r = await client.callTool({ name: tool, arguments: args });
      return { body: toolBody(r), isError: r.isError === true };
    },
    close: () => client.close(),
  };
}
