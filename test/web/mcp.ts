/** An MCP client for the web UI tests: the agent whose requests the owner answers in the browser. */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

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
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(path, base),
      token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {},
    ),
  );
  return {
    client,
    async call(tool, args = {}) {
      const r = (await client.callTool({ name: tool, arguments: args })) as {
        content: { type: string; text?: string }[];
        isError?: boolean;
      };
      const text = r.content.find((c) => c.type === 'text')?.text ?? '{}';
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { text };
      }
      return { body, isError: r.isError === true };
    },
    close: () => client.close(),
  };
}
