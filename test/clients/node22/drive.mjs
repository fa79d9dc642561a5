/**
 * One Node-22-only MCP client, driven by JSON lines (issue 36): run with the
 * Node 22 binary as `node drive.mjs <ai-sdk2|mcp-use> <http|stdio> <json target>`
 * with NODE_PATH-free resolution from .cache/clients22 (passed as argv[5]).
 * Prints `{"tools":[…]}` once connected, then for each `{"call":name,"args":{}}`
 * line on stdin prints `{"text":…}` (the result's text, or the error's message
 * and data: what the client shows its user). A `{"close":true}` line ends it.
 */
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [kind, transport, targetJson, cache] = process.argv.slice(2);
const to = JSON.parse(targetJson);
const req = createRequire(join(cache, 'node_modules', 'x.js'));
const load = (spec) => import(pathToFileURL(req.resolve(spec).replace(/\.cjs$/, '.js')).href);
const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

const textOf = (result) =>
  (result?.content ?? []).map((c) => c.text ?? '').join('\n') || JSON.stringify(result);
const errorText = (error) =>
  [error?.message, error?.data ? JSON.stringify(error.data) : ''].join(' ');

async function aiSdk2() {
  const { createMCPClient } = await load('@ai-sdk/mcp');
  const { Experimental_StdioMCPTransport: Stdio } = await load('@ai-sdk/mcp/mcp-stdio');
  const client = await createMCPClient({
    clientName: `ai-sdk2-${transport}`,
    transport:
      transport === 'http'
        ? { type: 'http', url: `${to.url}/mcp`, headers: { authorization: `Bearer ${to.token}` } }
        : new Stdio({ command: to.command, args: to.args, env: to.env }),
  });
  // The AI SDK turns every schema into one of its own: one it cannot read throws here.
  const tools = await client.tools();
  return {
    tools: Object.keys(tools),
    call: async (name, args) =>
      textOf(await tools[name].execute(args, { toolCallId: randomUUID(), messages: [] })),
    close: () => client.close(),
  };
}

async function mcpUse() {
  const { MCPClient } = await load('mcp-use/client');
  const server =
    transport === 'http'
      ? { url: `${to.url}/mcp`, headers: { authorization: `Bearer ${to.token}` } }
      : { command: to.command, args: to.args, env: to.env };
  const client = MCPClient.fromDict({ mcpServers: { airlock: server } });
  const session = await client.createSession('airlock');
  const tools = session.connector.tools ?? (await session.connector.listTools());
  return {
    tools: tools.map((t) => t.name),
    call: async (name, args) => textOf(await session.connector.callTool(name, args)),
    close: () => client.closeAllSessions(),
  };
}

const client = await (kind === 'ai-sdk2' ? aiSdk2() : mcpUse());
out({ tools: client.tools });
for await (const line of createInterface({ input: process.stdin })) {
  const msg = JSON.parse(line);
  if (msg.close) break;
  try {
    out({ text: await client.call(msg.call, msg.args) });
  } catch (error) {
    out({ text: errorText(error) });
  }
}
await client.close();
process.exit(0);
