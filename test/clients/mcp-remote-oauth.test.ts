/**
 * A real OAuth client against `airlock serve` (issue 29, spec/authority.md
 * §7): mcp-remote — the stdio bridge hosts such as Claude Desktop use to
 * reach remote servers, built on the v1 SDK's `auth()` — given only the MCP
 * URL. It discovers the server from the 401, registers itself (dynamic
 * registration, turned on here), prints the authorization URL; the owner's
 * browser opens it, the owner approves on the consent page's route, the
 * browser lands on mcp-remote's own callback, and the host behind it lists
 * and calls tools as the agent the consent made.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { freePort, startServe, type Served } from '../helpers/servers.js';
import { testEnv } from '../helpers/cli.js';
import { Browser, decideConsent } from '../helpers/oauth-client.js';
import { waitFor } from '../helpers/wait.js';

const MCP_REMOTE = fileURLToPath(
  new URL('../../node_modules/mcp-remote/dist/proxy.js', import.meta.url),
);
const dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-remote-oauth-'));
let served: Served;

beforeAll(async () => {
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ oauth: { dynamicRegistration: true } }));
  served = await startServe(['--data', join(dir, 'data'), '--doors', 'ledger', '--config', config]);
}, 60_000);
afterAll(() => {
  served?.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

it('mcp-remote connects by OAuth: registers, the owner approves, its host calls tools as that agent', async () => {
  const callbackPort = await freePort();
  const transport = new StdioV1({
    command: process.execPath,
    args: [
      MCP_REMOTE,
      `${served.url}/mcp/ledger`,
      String(callbackPort),
      '--transport',
      'http-only',
      '--allow-http',
    ],
    env: {
      ...(testEnv() as Record<string, string>),
      MCP_REMOTE_CONFIG_DIR: join(dir, 'mcp-remote'),
      BROWSER: 'none',
    },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const client = new ClientV1({ name: 'desktop-host', version: '1' });
  const connected = client.connect(transport);

  const seen = () => /Please authorize this client by visiting:\s+(\S+)/.exec(log)?.[1];
  await waitFor(() => seen() !== undefined, {
    timeoutMs: 20_000,
    message: "mcp-remote's authorization URL",
  });
  const authorizationUrl = seen()!;
  const browser = new Browser();
  const consent = await browser.follow(authorizationUrl, (u) =>
    u.pathname.startsWith('/oauth/consent/'),
  );
  const id = consent.pathname.slice('/oauth/consent/'.length);
  const decided = await decideConsent(served.url, served.ownerToken!, id, {
    decision: 'approve',
    agent: 'desktop',
  });
  expect(decided.status).toBe(200);
  const { redirectTo } = (await decided.json()) as { redirectTo: string };
  const back = await browser.follow(
    new URL(redirectTo, served.url).href,
    (u) => u.port === String(callbackPort),
  );
  // The browser lands on mcp-remote's own callback page with the code.
  expect(back.searchParams.get('code')).toBeTruthy();
  expect((await fetch(back)).status).toBe(200);

  await connected;
  const tools = (await client.listTools()).tools.map((t) => t.name);
  expect(tools).toContain('ledger_echo');
  const echoed = await client.callTool({ name: 'ledger_echo', arguments: { text: 'by oauth' } });
  expect(echoed.isError).toBeFalsy();
  // The kernel treats it as any agent: a ledger write needs the owner's grant first, and the audit names it.
  const appended = await client.callTool({
    name: 'ledger_append',
    arguments: { operationID: randomUUID(), account: 'oauth', amount: 1, expectedVersion: null },
  });
  expect(JSON.stringify(appended)).toContain('notAuthorized');
  await client.close();

  const audit = (await (
    await fetch(`${served.url}/api/v1/audit?limit=20`, {
      headers: { authorization: `Bearer ${served.ownerToken!}` },
    })
  ).json()) as { entries: { tool: string; connection: string }[] };
  const call = audit.entries.find((e) => e.tool === 'ledger_append');
  expect(call?.connection).toMatch(/desktop/);
}, 60_000);
