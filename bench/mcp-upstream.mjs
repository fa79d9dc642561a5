/**
 * The upstream the mcp bench measures against: an SDK v2 `McpServer` with
 * one read-only `echo` tool, over stdio (`node bench/mcp-upstream.mjs
 * stdio`) or streamable HTTP on a free loopback port (`… http`, prints
 * `listening <url>`), so both legs of a row call the very same server.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';

function server() {
  const s = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
  s.registerTool(
    'echo',
    {
      description: 'Echoes its text.',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return s;
}

if (process.argv[2] === 'http') {
  const sessions = new Map();
  const http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return void existing.handleRequest(req, res);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    void server()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  http.listen(0, '127.0.0.1', () =>
    console.log(`listening http://127.0.0.1:${http.address().port}/mcp`),
  );
  process.on('SIGTERM', () => process.exit(0));
} else {
  serveStdio(() => server());
}
