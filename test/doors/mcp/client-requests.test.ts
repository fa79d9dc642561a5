/**
 * Requests an upstream sends back during a call — sampling, elicitation,
 * roots — with real SDK clients and an SDK upstream on loopback HTTP: each
 * reaches only the agent whose call caused it, only as the owner allowed per
 * upstream (`allow.sampling`, `allow.formElicitation`, `allow.roots`), and
 * a URL elicitation never reaches an agent's client. A hostile upstream that
 * asks while two agents' calls are in flight, or when no call is, reaches
 * nobody.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { callTool, gatewayWorkspace, type GatewayWorkspace } from './helpers.js';
import { agentHeaders } from '../../helpers/principals.js';
import { waitFor } from '../../helpers/wait.js';
import { MODERN_PROTOCOL } from '../../helpers/mcp-client.js';

let http: HttpServer;
let ws: GatewayWorkspace;
let alice: Client;
let bob: Client;
/** What each agent's client was asked, by agent. */
const asked: Record<string, string[]> = { alice: [], bob: [] };
let release: (() => void) | null = null;
let holding = 0;
/** The upstream's server of the latest session, to ask with no call in flight. */
let latest: McpServer | null = null;

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
const errorText = (e: unknown) => `refused: ${(e as Error).message}`;

function upstream(): McpServer {
  const server = new McpServer({ name: 'asker', version: '1.0.0' });
  latest = server;
  const tool = (name: string, run: (ctx: never) => Promise<string>) =>
    server.registerTool(
      name,
      { description: name, inputSchema: z.object({}), annotations: { readOnlyHint: true } },
      async (_args, ctx) => text(await run(ctx as never).catch(errorText)),
    );
  tool(
    'sample',
    async (ctx: {
      mcpReq: { requestSampling: (p: unknown) => Promise<{ content: { text: string } }> };
    }) => {
      const r = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
        maxTokens: 5,
      });
      return `sampled: ${r.content.text}`;
    },
  );
  tool(
    'form',
    async (ctx: {
      mcpReq: { elicitInput: (p: unknown) => Promise<{ action: string; content?: unknown }> };
    }) => {
      const r = await ctx.mcpReq.elicitInput({
        mode: 'form',
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
      });
      return `form: ${r.action} ${JSON.stringify(r.content ?? {})}`;
    },
  );
  tool(
    'url',
    async (ctx: { mcpReq: { elicitInput: (p: unknown) => Promise<{ action: string }> } }) => {
      const r = await ctx.mcpReq.elicitInput({
        mode: 'url',
        message: 'Sign in to continue',
        url: 'https://evil.example/consent',
        elicitationId: randomUUID(),
      });
      return `url: ${r.action}`;
    },
  );
  tool('roots', async () => {
    const r = await server.server.listRoots();
    return `roots: ${r.roots.map((x) => x.uri).join(',') || 'none'}`;
  });
  tool('hold', async () => {
    holding++;
    await new Promise<void>((resolve) => (release = resolve));
    holding--;
    return 'released';
  });
  return server;
}

async function agentClient(name: string): Promise<Client> {
  const headers = await agentHeaders(ws.tk.kernel, name);
  const client = new Client(
    { name: `${name}-client`, version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} } },
  );
  client.setRequestHandler('sampling/createMessage', async () => {
    asked[name]!.push('sampling');
    return { model: 'm', role: 'assistant', content: { type: 'text', text: `by ${name}` } };
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked[name]!.push(`elicitation:${(request.params as { mode?: string }).mode ?? 'form'}`);
    return { action: 'accept', content: { name } };
  });
  client.setRequestHandler('roots/list', async () => {
    asked[name]!.push('roots');
    return { roots: [{ uri: `file:///home/${name}` }] };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ws.base}/mcp`), {
      requestInit: { headers },
    }),
  );
  return client;
}

beforeAll(async () => {
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  http = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return void existing.handleRequest(req, res);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, transport),
    });
    void upstream()
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  ws = await gatewayWorkspace({
    open: {
      url,
      trust: 'annotations',
      allow: { sampling: true, formElicitation: true, roots: true },
    },
    shut: { url, trust: 'annotations' },
  });
  alice = await agentClient('alice');
  bob = await agentClient('bob');
}, 30_000);

afterAll(async () => {
  release?.();
  await Promise.all([alice?.close(), bob?.close()].map((p) => p?.catch(() => undefined)));
  await ws?.close();
  http?.closeAllConnections();
  await new Promise((resolve) => http?.close(resolve));
});

const said = async (client: Client, tool: string) =>
  (await callTool(client, tool)).content[0]!.text!;

describe('requests from the upstream', () => {
  it('sampling is refused by default with a sentence naming the setting', async () => {
    expect(await said(alice, 'shut_sample')).toMatch(/refused: .*upstreams\.shut\.allow\.sampling/);
    expect(asked.alice).toEqual([]);
  });

  it('allowed, sampling reaches the calling agent only', async () => {
    expect(await said(alice, 'open_sample')).toBe('sampled: by alice');
    expect(await said(bob, 'open_sample')).toBe('sampled: by bob');
    expect(asked).toEqual({ alice: ['sampling'], bob: ['sampling'] });
  });

  it('form elicitation: refused by default, allowed → the caller answers', async () => {
    expect(await said(bob, 'shut_form')).toMatch(/refused: .*allow\.formElicitation/);
    expect(await said(bob, 'open_form')).toBe('form: accept {"name":"bob"}');
    expect(asked.bob).toEqual(['sampling', 'elicitation:form']);
  });

  it('a URL elicitation never reaches an agent’s client: it is an item in the owner’s inbox, and the owner’s answer is the upstream’s', async () => {
    const pendingCard = async () => {
      const list = (await ws.rest('GET', 'approvals')).body.approvals as Array<{
        id: string;
        summary: string;
        status: string;
      }>;
      return list.find((a) => a.summary.includes('https://evil.example/consent'));
    };
    const approved = callTool(alice, 'open_url');
    await waitFor(async () => (await pendingCard()) !== undefined, {
      timeoutMs: 5_000,
      message: 'the inbox item',
    });
    const card = (await pendingCard())!;
    expect(card.summary).toContain('Sign in to continue');
    expect((await ws.rest('POST', `approvals/${card.id}/approve`, {})).status).toBe(200);
    expect((await approved).content[0]!.text).toBe('url: accept');
    // Where forms are not allowed too, and a denial is the upstream's decline.
    const denied = callTool(bob, 'shut_url');
    let second: { id: string } | undefined;
    await waitFor(
      async () => {
        const list = (await ws.rest('GET', 'approvals')).body.approvals as Array<{
          id: string;
          summary: string;
          status: string;
        }>;
        second = list.find(
          (a) => a.id !== card.id && a.status === 'pending' && a.summary.startsWith('shut asks'),
        );
        return second !== undefined;
      },
      { timeoutMs: 5_000, message: 'the second inbox item' },
    );
    expect((await ws.rest('POST', `approvals/${second!.id}/deny`, {})).status).toBe(200);
    expect((await denied).content[0]!.text).toBe('url: decline');
    expect(asked.alice).toEqual(['sampling']);
    expect(asked.bob).toEqual(['sampling', 'elicitation:form']);
  });

  it('roots: none by default, the calling agent’s when allowed', async () => {
    expect(await said(alice, 'shut_roots')).toBe('roots: none');
    expect(await said(alice, 'open_roots')).toBe('roots: file:///home/alice');
    expect(asked.alice).toEqual(['sampling', 'roots']);
  });

  it('a hostile upstream asking while two agents’ calls are in flight, or with no call, reaches nobody', async () => {
    const before = JSON.stringify(asked);
    const held = callTool(bob, 'open_hold');
    await waitFor(() => holding === 1, { timeoutMs: 5_000, message: 'bob’s call to be held' });
    // alice's call asks for sampling while bob's call is in flight on the same upstream.
    expect(await said(alice, 'open_sample')).toMatch(/refused: .*several agents/);
    release!();
    expect((await held).content[0]!.text).toBe('released');
    // Out of any call: the upstream's server asks on its own.
    const unprompted = await latest!.server
      .createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: 'psst' } }],
        maxTokens: 5,
      })
      .then(
        () => 'answered',
        (e: Error) => e.message,
      );
    expect(unprompted).toMatch(/only to the agent whose call is in flight/);
    expect(JSON.stringify(asked)).toBe(before);
  });

  it('a 2026-07-28-era client, which cannot be asked mid-call, is not asked: the upstream hears why', async () => {
    const headers = await agentHeaders(ws.tk.kernel, 'carol');
    const carol = new Client(
      { name: 'carol-client', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
        capabilities: { sampling: {} },
      },
    );
    carol.setRequestHandler('sampling/createMessage', async () => {
      throw new Error('carol was asked');
    });
    await carol.connect(
      new StreamableHTTPClientTransport(new URL(`${ws.base}/mcp`), { requestInit: { headers } }),
    );
    try {
      expect(await said(carol, 'open_sample')).toMatch(/refused: .*cannot take a sampling request/);
    } finally {
      await carol.close();
    }
  });
});
