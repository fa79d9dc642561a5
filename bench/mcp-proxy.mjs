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
 * `node bench/mcp-proxy.mjs --http URL` over streamable HTTP to an HTTP upstream;
 * `createBareProxy(transport)` builds one in process (its `server` is
 * connected by the caller, e.g. to an in-memory transport).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
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

/** `--http URL`: the same proxy over streamable HTTP both ways (sessions, as Airlock serves; prints `listening <url>`). */
async function serveHttp(url) {
  const proxy = await createBareProxy(new StreamableHTTPClientTransport(new URL(url)));
  const sessions = new Map();
  const http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return void existing.handleRequest(req, res);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    void proxy
      .server()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  http.listen(0, '127.0.0.1', () =>
    console.log(`listening http://127.0.0.1:${http.address().port}/mcp`),
  );
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--http') {
  await serveHttp(process.argv[3]);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...args] = process.argv.slice(2);
  const proxy = await createBareProxy(
    new StdioClientTransport({ command, args, stderr: 'ignore' }),
  );
  const handle = serveStdio(proxy.server);
  process.stdin.once('end', () => void handle.close().then(proxy.close));
}
