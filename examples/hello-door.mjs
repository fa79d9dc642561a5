#!/usr/bin/env node
// A smallest custom door served through the Airlock kernel, and an MCP client
// calling it over loopback HTTP. Run: npm run build && node examples/hello-door.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createEventBus,
  createHttpApp,
  createKernel,
  defineTool,
  openStore,
  silentLogger,
} from 'airlock';

const data = mkdtempSync(join(tmpdir(), 'airlock-example-'));
const { store, blobs } = await openStore({ data });
const kernel = createKernel({ store, blobs, events: await createEventBus(), logger: silentLogger });

kernel.mount({
  name: 'hello',
  tools: [
    defineTool({
      name: 'hello_greet',
      description: 'Greet someone by name.',
      input: z.object({ name: z.string().min(1).max(100) }).strict(),
      output: z.object({ greeting: z.string() }),
      effect: 'read',
      handler: async ({ name }) => ({ greeting: `Hello, ${name}!` }),
    }),
  ],
});
await kernel.start();

const app = createHttpApp({ kernel, logger: silentLogger });
const { port } = await app.listen(0, '127.0.0.1');

// Every MCP client is an agent with a token of its own (the owner makes it).
const agent = await kernel.principals.addAgent('example');

const client = new Client({ name: 'example', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${agent.token}` } },
  }),
);
const ok = await client.callTool({ name: 'hello_greet', arguments: { name: 'Ada' } });
const refused = await client.callTool({
  name: 'hello_greet',
  arguments: { name: 'Ada', extra: 1 },
});
console.log(
  JSON.stringify({ ok: ok.structuredContent, refused: JSON.parse(refused.content[0].text) }),
);

await client.close();
await app.close();
await kernel.close();
await store.close();
rmSync(data, { recursive: true, force: true });
