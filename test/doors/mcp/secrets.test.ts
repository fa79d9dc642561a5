/**
 * A configured secret never reaches an agent through an upstream's
 * metadata or results, nor the stored tool list: an SDK upstream on
 * loopback HTTP carries the secret in a tool description (in every
 * encoding the scrubber knows), an annotation title, a parameter
 * description, and splits it across two text blocks of a result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { callTool, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';

const SECRET = 'tok-Live_93fA/kQ+z';
const bytes = Buffer.from(SECRET);
const ENCODINGS: Record<string, string> = {
  plain: SECRET,
  upper: SECRET.toUpperCase(),
  lower: SECRET.toLowerCase(),
  hex: bytes.toString('hex'),
  HEX: bytes.toString('hex').toUpperCase(),
  base64: Buffer.from(SECRET).toString('base64'),
  base64offset1: Buffer.from(`a${SECRET}`).toString('base64'),
  base64offset2: Buffer.from(`ab${SECRET}`).toString('base64'),
  unicode: [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  html: [...SECRET].map((c) => `&#${c.codePointAt(0)};`).join(''),
  htmlHex: [...SECRET].map((c) => `&#x${c.codePointAt(0)!.toString(16)};`).join(''),
  percent: [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
};

/** Whether `text` holds the secret in any of the encodings, or a base64 run that decodes to it. */
const leaks = (text: string) =>
  Object.entries(ENCODINGS)
    .filter(([, form]) => text.includes(form) || text.toLowerCase().includes(form.toLowerCase()))
    .map(([name]) => name)
    .concat(
      (text.match(/[A-Za-z0-9+/]{12,}/g) ?? []).some((run) =>
        [0, 1, 2, 3].some((cut) =>
          Buffer.from(run.slice(cut), 'base64').toString('latin1').includes(SECRET.slice(2, 12)),
        ),
      )
        ? ['base64 run']
        : [],
    );

let http: HttpServer;
let ws: GatewayWorkspace;
let cacheDir: string;

function upstream(): McpServer {
  const server = new McpServer({ name: 'leaky', version: '1.0.0' });
  for (const [name, form] of Object.entries(ENCODINGS))
    server.registerTool(
      `describe_${name}`,
      {
        description: `Uses the key ${form} when asked.`,
        inputSchema: z.object({}),
        annotations: { readOnlyHint: true },
      },
      async () => ({ content: [{ type: 'text', text: 'ok' }] }),
    );
  server.registerTool(
    'titled',
    {
      description: 'Has a secret title and parameter',
      inputSchema: z.object({ q: z.string().describe(`pass ${SECRET} here`) }),
      annotations: { readOnlyHint: true, title: `Key ${SECRET}` },
    },
    async () => ({
      content: [
        { type: 'text', text: `first half ${SECRET.slice(0, 9)}` },
        { type: 'text', text: `${SECRET.slice(9)} second half` },
      ],
    }),
  );
  return server;
}

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'airlock-mcp-cache-'));
  const handler = toNodeHandler(createMcpHandler(() => upstream()));
  http = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  ws = await gatewayWorkspace(
    { leaky: { url, secrets: ['AIRLOCK_TEST_LEAKY_KEY'] } },
    { env: { ...process.env, AIRLOCK_TEST_LEAKY_KEY: SECRET }, cacheDir },
  );
}, 30_000);

afterAll(async () => {
  await ws?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('secrets in upstream metadata', () => {
  it('a secret in a tool description, in every encoding, never reaches the agent in tools/list', async () => {
    const alice = await ws.agent('alice');
    const { tools } = await alice.listTools();
    for (const name of Object.keys(ENCODINGS)) {
      const tool = tools.find((t) => t.name === `leaky_describe_${name}`);
      expect(tool, name).toBeDefined();
      expect(tool!.description, name).toContain('[REDACTED]');
      expect(leaks(JSON.stringify(tool)), name).toEqual([]);
    }
  });

  it('a secret in an annotation title or a parameter description never reaches the agent', async () => {
    const alice = await ws.agent('bob');
    const { tools } = await alice.listTools();
    const titled = tools.find((t) => t.name === 'leaky_titled')!;
    expect(titled.annotations?.title).toBe('Key [REDACTED]');
    expect(JSON.stringify(titled.inputSchema)).toContain('pass [REDACTED] here');
    expect(leaks(JSON.stringify(tools))).toEqual([]);
  });

  it('the stored tool list holds no secret', () => {
    const stored = readFileSync(join(cacheDir, 'leaky.tools.json'), 'utf8');
    expect(stored).toContain('[REDACTED]');
    expect(leaks(stored)).toEqual([]);
  });

  it('a secret split across two text blocks of a result is redacted in both', async () => {
    const alice = await ws.agent('carol');
    const r = await callTool(alice, 'leaky_titled', { q: 'x' });
    expect(r.content.map((c) => c.text)).toEqual([
      'first half [REDACTED]',
      '[REDACTED] second half',
    ]);
  });
});
