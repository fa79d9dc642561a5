/**
 * The floor of any MCP gateway, for the mcp bench: a bare SDK v2 proxy with
 * no kernel — a low-level `Server` whose `tools/list` and `tools/call` go
 * straight to an SDK `Client` of the upstream (prefix `up_`, as `airlock mcp
 * up=…` names them), nothing validated, decided, audited or scrubbed. What
 * it costs over a direct call is the extra process hop (one more JSON
 * serialise/parse each way and a pipe round trip); what Airlock costs over
 * it is the kernel's own work.
 *
 * `node bench/mcp-proxy.mjs COMMAND ARGS…` serves over stdio;
 * `createBareProxy(transport)` builds one in process (its `server` is
 * connected by the caller, e.g. to an in-memory transport).
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const PREFIX = 'up_';

/** Connects to the upstream; `server()` makes one proxy `Server` over that connection. */
export async function createBareProxy(upstreamTransport) {
  const upstream = new Client({ name: 'bare-proxy', version: '1' });
  await upstream.connect(upstreamTransport);
  const server = () => {
    const s = new Server({ name: 'bare-proxy', version: '1' }, { capabilities: { tools: {} } });
    s.setRequestHandler('tools/list', async () => {
      const { tools } = await upstream.listTools();
      return { tools: tools.map((t) => ({ ...t, name: PREFIX + t.name })) };
    });
    s.setRequestHandler('tools/call', async (request, ctx) =>
      upstream.callTool(
        { name: request.params.name.slice(PREFIX.length), arguments: request.params.arguments },
        { signal: ctx.mcpReq.signal },
      ),
    );
    return s;
  };
  return { server, close: () => upstream.close() };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  const proxy = await createBareProxy(
    new StdioClientTransport({ command, args, stderr: 'ignore' }),
  );
  const handle = serveStdio(proxy.server);
  process.stdin.once('end', () => void handle.close().then(proxy.close));
}
