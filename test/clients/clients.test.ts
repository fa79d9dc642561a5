/**
 * The clients people use (issue 36 item 9): the v1 TypeScript SDK, the
 * Vercel AI SDK's MCP client, LangChain's MCP adapters and mcp-remote, over
 * HTTP and stdio, against a real `airlock serve`. For each: connect, list the
 * tools (every schema accepted by that client), read, ask — the card's link
 * visible to it — the owner approves over REST, and the retry runs exactly
 * once (one audited run; the next identical call asks again); the ask
 * outlives the connection (disconnect, approve, a new connection's retry runs
 * once); and with `--tool-names portable` every listed name is portable while
 * the owner's rule on the exact name still holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport as AiStdio } from '@ai-sdk/mcp/mcp-stdio';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { startServe, type Served } from '../helpers/servers.js';
import { CLIENT_RULES, ownerSide } from './owner-side.js';
import { BIN, testEnv } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-clients-'));
const data = join(dir, 'data');
const config = join(dir, 'config.json');
const MCP_REMOTE = fileURLToPath(
  new URL('../../node_modules/mcp-remote/dist/proxy.js', import.meta.url),
);
/** The ledger for the ask, scene and notes so every client reads their schemas too. */
const DOORS = 'ledger,scene,notes';
let served: Served;

/** The same doors served with `--tool-names portable`, on a folder of its own. */
const portableData = join(dir, 'portable');
let portable: Served;

beforeAll(async () => {
  writeFileSync(config, JSON.stringify({ policy: { rules: CLIENT_RULES } }));
  served = await startServe(['--data', data, '--doors', DOORS, '--config', config]);
  portable = await startServe([
    ...['--data', portableData, '--doors', DOORS, '--config', config],
    ...['--tool-names', 'portable'],
  ]);
});
afterAll(async () => {
  for (const s of [served, portable]) s?.child.kill('SIGTERM');
  await served?.exited;
  await portable?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** Where a driver connects: an HTTP server's URL and token, and the `airlock stdio` arguments beside it. */
interface Target {
  url: string;
  token: string;
  stdioArgs: string[];
}
const exactTarget = (): Target => ({ url: served.url, token: served.agentToken ?? '', stdioArgs });
const portableTarget = (): Target => ({
  url: portable.url,
  token: portable.agentToken ?? '',
  stdioArgs: [
    ...[BIN, 'stdio', '--doors', DOORS, '--data', portableData, '--config', config],
    ...['--tool-names', 'portable'],
  ],
});

/** What a client gives its user for one tool call: the result's text (or the error's message). */
type CallText = (name: string, args: Record<string, unknown>) => Promise<string>;

interface Driven {
  tools: string[];
  call: CallText;
  close(): Promise<void>;
}

const stdioArgs = [BIN, 'stdio', '--doors', DOORS, '--data', data, '--config', config];
const env = () => testEnv() as Record<string, string>;

const textOf = (result: unknown): string => {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
};

async function v1(transport: 'http' | 'stdio', to: Target): Promise<Driven> {
  const client = new ClientV1({ name: `v1-${transport}`, version: '1.32' });
  await client.connect(
    transport === 'http'
      ? new HttpV1(new URL(`${to.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${to.token}` } },
        })
      : new StdioV1({ command: process.execPath, args: to.stdioArgs, env: env(), stderr: 'pipe' }),
  );
  return {
    tools: (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args) => textOf(await client.callTool({ name, arguments: args })),
    close: () => client.close(),
  };
}

async function aiSdk(transport: 'http' | 'stdio', to: Target): Promise<Driven> {
  const client = await createMCPClient({
    clientName: `ai-sdk-${transport}`,
    transport:
      transport === 'http'
        ? {
            type: 'http',
            url: `${to.url}/mcp`,
            headers: { authorization: `Bearer ${to.token}` },
          }
        : new AiStdio({ command: process.execPath, args: to.stdioArgs, env: env() }),
  });
  // The AI SDK turns every tool's schema into one of its own: a schema it cannot read throws here.
  const tools = await client.tools();
  return {
    tools: Object.keys(tools),
    call: async (name, args) => {
      const tool = tools[name]!;
      const result = await tool.execute!(args as never, { toolCallId: randomUUID(), messages: [] });
      return textOf(result);
    },
    close: () => client.close(),
  };
}

async function langchain(transport: 'http' | 'stdio', to: Target): Promise<Driven> {
  const client = new MultiServerMCPClient({
    throwOnLoadError: true,
    mcpServers: {
      airlock:
        transport === 'http'
          ? {
              transport: 'http',
              url: `${to.url}/mcp`,
              headers: { authorization: `Bearer ${to.token}` },
            }
          : { transport: 'stdio', command: process.execPath, args: to.stdioArgs, env: env() },
    },
  });
  const tools = await client.getTools();
  const byName = new Map(tools.map((t) => [t.name.replace(/^mcp__airlock__/, ''), t]));
  return {
    tools: [...byName.keys()],
    call: async (name, args) => {
      try {
        const out = await byName.get(name)!.invoke(args);
        return typeof out === 'string' ? out : JSON.stringify(out);
      } catch (error) {
        return (error as Error).message;
      }
    },
    close: () => client.close(),
  };
}

/** mcp-remote: the stdio bridge hosts use to reach an HTTP server, with the token as a header. */
async function mcpRemote(to: Target): Promise<Driven> {
  const client = new ClientV1({ name: 'mcp-remote-host', version: '1' });
  await client.connect(
    new StdioV1({
      command: process.execPath,
      args: [
        MCP_REMOTE,
        `${to.url}/mcp`,
        '--transport',
        'http-only',
        '--header',
        `Authorization:Bearer ${to.token}`,
        '--allow-http',
      ],
      env: { ...env(), MCP_REMOTE_CONFIG_DIR: join(dir, 'mcp-remote') },
      stderr: 'pipe',
    }),
  );
  return {
    tools: (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args) => textOf(await client.callTool({ name, arguments: args })),
    close: () => client.close(),
  };
}

const drivers: [string, (to: Target) => Promise<Driven>][] = [
  ['v1 SDK over HTTP', (to) => v1('http', to)],
  ['v1 SDK over stdio', (to) => v1('stdio', to)],
  ['AI SDK 1 over HTTP', (to) => aiSdk('http', to)],
  ['AI SDK 1 over stdio', (to) => aiSdk('stdio', to)],
  ['LangChain adapters over HTTP', (to) => langchain('http', to)],
  ['LangChain adapters over stdio', (to) => langchain('stdio', to)],
  ['mcp-remote (stdio to HTTP)', (to) => mcpRemote(to)],
];

const { askedId, approveOnce, auditAfter } = ownerSide(() => served);

describe.sequential('the clients people use', () => {
  for (const [label, drive] of drivers) {
    it(`${label}: connect, list, read, ask with the card's link, approve, the retry runs once`, async () => {
      const client = await drive(exactTarget());
      try {
        expect(client.tools).toEqual(
          expect.arrayContaining(['ledger_echo', 'koharu.apply', 'rooqi_append_text']),
        );
        // A read the policy allows.
        const read = await client.call('ledger_query_operation', { operationID: randomUUID() });
        expect(read).toContain('not-found');
        // An ask: the text the client shows carries the card's link.
        const text = `hello from ${label}`;
        const asked = await client.call('ledger_echo', { text });
        expect(asked).toMatch(new RegExp(`"approvalUrl":\\s*"${served.url}/#/approvals/`));
        const { last } = await auditAfter(0);
        await approveOnce(askedId(asked));
        const ran = await client.call('ledger_echo', { text });
        expect(ran).toContain(text);
        expect(ran).not.toContain('approvalRequired');
        // Approved once: the same call asks again, and the approved call ran exactly once.
        expect(await client.call('ledger_echo', { text })).toContain('approvalRequired');
        await waitFor(async () => (await auditAfter(last)).echoes >= 1, {
          message: 'the approved call in the audit',
        });
        expect((await auditAfter(last)).echoes).toBe(1);
      } finally {
        await client.close();
      }
    });

    it(`${label}: an ask outlives the connection — disconnect, the owner approves, a new connection's retry runs once`, async () => {
      const text = `after a reconnect, from ${label}`;
      const first = await drive(exactTarget());
      let id: string;
      try {
        id = askedId(await first.call('ledger_echo', { text }));
      } finally {
        await first.close();
      }
      await approveOnce(id);
      const { last } = await auditAfter(0);
      const second = await drive(exactTarget());
      try {
        const ran = await second.call('ledger_echo', { text });
        expect(ran).toContain(text);
        expect(ran).not.toContain('approvalRequired');
      } finally {
        await second.close();
      }
      await waitFor(async () => (await auditAfter(last)).echoes >= 1, {
        message: 'the approved call in the audit',
      });
      expect((await auditAfter(last)).echoes).toBe(1);
    });

    it(`${label}: with --tool-names portable every name is portable and the owner's rule on the exact name still holds`, async () => {
      const client = await drive(portableTarget());
      try {
        for (const name of client.tools) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(client.tools).toEqual(
          expect.arrayContaining(['koharu_apply', 'koharu_list_engines']),
        );
        expect(client.tools).not.toContain('koharu.apply');
        // The rule says `koharu.list_engines`: the call by its portable name is refused by it.
        const refused = await client.call('koharu_list_engines', {});
        expect(refused).toMatch(/notAuthorized|denied/i);
        expect(refused).toContain('koharu.list_engines');
      } finally {
        await client.close();
      }
    });
  }
});
