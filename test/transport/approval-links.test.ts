/**
 * Every ask carries its card's link, and no client is left hanging (issue
 * 36 items 1 and 3): `approvalRequired` names `approvalUrl` for clients
 * without URL elicitation, over HTTP and over stdio (the server on the same
 * data folder); a declined link answers at once; an undecided one answers
 * when `approvals.waitSeconds` runs out, before common clients' 60 s timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient } from '../helpers/mcp-client.js';
import { BIN, run, testEnv } from '../helpers/cli.js';
import { toolJson } from '../helpers/results.js';

const WAIT_SECONDS = 3;
const dir = mkdtempSync(join(tmpdir(), 'airlock-approval-links-'));
const data = join(dir, 'data');
const config = join(dir, 'config.json');
let served: Served;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  writeFileSync(
    config,
    JSON.stringify({
      policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] },
      approvals: { waitSeconds: WAIT_SECONDS },
    }),
  );
  served = await startServe(['--data', data, '--doors', 'ledger', '--config', config]);
});
afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const echo = async (client: Client, text: string) =>
  toolJson(await client.callTool({ name: 'ledger_echo', arguments: { text } }));

const cardOf = (base: string, id: unknown) => `${base}/#/approvals/${String(id)}`;

/** A 2025-era client that shows links and answers them with `action`. */
async function linkClient(action: 'accept' | 'decline' | 'cancel') {
  const client = new Client(
    { name: `link-${action}`, version: '1' },
    { capabilities: { elicitation: { url: {} } } },
  );
  const shown: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    shown.push((request.params as { url: string }).url);
    return { action } as never;
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${served.agentToken}` } },
    }),
  );
  closers.push(() => client.close());
  return { client, shown };
}

describe('approvalRequired carries the card’s link', () => {
  it('over HTTP, to a client without URL elicitation: approvalUrl and the link in the message', async () => {
    const client = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
    closers.push(() => client.close());
    const asked = await echo(client, 'plain');
    expect(asked.code).toBe('approvalRequired');
    const url = cardOf(served.url, asked.approvalID);
    expect(asked.approvalUrl).toBe(url);
    expect(asked.message).toContain(`request ${String(asked.approvalID)} at ${url}`);
  });

  it('over stdio, the link of the server running on the same data folder', async () => {
    const client = new Client({ name: 'stdio-asker', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'stdio', '--doors', 'ledger', '--data', data, '--config', config],
        env: testEnv() as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    closers.push(() => client.close());
    const asked = await echo(client, 'stdio');
    expect(asked.code).toBe('approvalRequired');
    expect(asked.approvalUrl).toBe(cardOf(served.url, asked.approvalID));
  });

  it('over stdio with no server on the folder, the message says how the owner answers', async () => {
    const lone = join(dir, 'lone');
    const client = new Client({ name: 'stdio-alone', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'stdio', '--doors', 'ledger', '--data', lone, '--config', config],
        env: testEnv() as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    closers.push(() => client.close());
    const asked = await echo(client, 'alone');
    expect(asked.code).toBe('approvalRequired');
    expect(asked.approvalUrl).toBeUndefined();
    expect(asked.message).toContain(`airlock approvals --data ${lone}`);
  });
});

describe('a client is never left hanging', () => {
  for (const action of ['decline', 'cancel'] as const) {
    it(`a link answered ${action} ends the wait at once with the link, and the card stays for the owner`, async () => {
      const { client, shown } = await linkClient(action);
      const started = Date.now();
      const asked = await echo(client, `${action}d`);
      // Without the fix the call waits the whole WAIT_SECONDS.
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(shown).toHaveLength(1);
      expect(asked.code).toBe('approvalRequired');
      expect(asked.approvalUrl).toBe(shown[0]);
      const pending = await run([
        'approvals',
        'list',
        '--json',
        '--url',
        served.url,
        '--owner-token',
        served.ownerToken!,
      ]);
      expect(pending.code, pending.stderr).toBe(0);
      expect(JSON.parse(pending.stdout)).toContainEqual(
        expect.objectContaining({ id: asked.approvalID }),
      );
    });
  }

  it('an undecided link answers approvalRequired with the link when approvals.waitSeconds runs out', async () => {
    const { client, shown } = await linkClient('accept');
    const started = Date.now();
    const asked = await echo(client, 'undecided');
    expect(Date.now() - started).toBeGreaterThanOrEqual(WAIT_SECONDS * 1000 - 100);
    expect(asked.code).toBe('approvalRequired');
    expect(asked.approvalUrl).toBe(shown[0]);
  });

  it('refuses approvals.waitSeconds of 60 or more (clients give up at 60 s)', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ approvals: { waitSeconds: 60 } }));
    const result = await run(['serve', '--config', bad, '--port', '0', '--data', join(dir, 'bad')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('approvals.waitSeconds');
  });
});
