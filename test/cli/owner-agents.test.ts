/**
 * The owner and the agents from a terminal, as a new user meets them
 * (spec/authority.md §1, §4): what `airlock serve` prints works as printed,
 * the data folder is private, and `airlock agents|owner|approvals` act as the
 * owner on a running server's folder.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../helpers/cli.js';
import { printedCredentials, startProcess, startServe } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { waitFor } from '../helpers/wait.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-owner-'));
  dirs.push(d);
  return d;
};

/** The JSON configurations printed after a heading line. */
function printedConfig(out: string, heading: RegExp): Record<string, unknown> {
  const start = out.search(heading);
  const from = out.indexOf('{', start);
  let depth = 0;
  for (let i = from; i < out.length; i++) {
    if (out[i] === '{') depth++;
    if (out[i] === '}' && --depth === 0) return JSON.parse(out.slice(from, i + 1));
  }
  throw new Error(`no configuration after ${heading}`);
}

describe('a fresh airlock serve', () => {
  it('prints an HTTP configuration an SDK v2 client uses as printed, and a stdio one that works', async () => {
    const data = tempDir();
    const served = await startServe(['--doors', 'ledger', '--data', data]);
    const http = printedConfig(served.stdout(), /MCP client configuration over HTTP/) as {
      mcpServers: Record<string, { url: string; headers: Record<string, string> }>;
    };
    const entry = Object.values(http.mcpServers)[0]!;
    expect(entry.headers.Authorization).toMatch(/^Bearer ak_/);
    const client = new Client({ name: 'pasted', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(entry.url), {
        requestInit: { headers: entry.headers },
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ledger_echo');
    await client.close();
    served.child.kill('SIGTERM');
    await served.exited;

    const stdio = printedConfig(served.stdout(), /MCP client configuration over stdio/) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    const spawnIt = Object.values(stdio.mcpServers)[0]!;
    expect(spawnIt.args[0]).toBe(BIN);
    const viaStdio = new Client({ name: 'spawner', version: '1' });
    await viaStdio.connect(
      new StdioClientTransport({
        command: spawnIt.command,
        args: spawnIt.args,
        env: testEnv() as Record<string, string>,
        stderr: 'ignore',
      }),
    );
    expect((await viaStdio.listTools()).tools.map((t) => t.name)).toContain('ledger_echo');
    await viaStdio.close();
  });

  it('keeps the data folder 0700 and its files 0600 even under umask 022', async () => {
    const data = tempDir();
    const started = await startProcess(
      '/bin/sh',
      [
        '-c',
        `umask 022; exec "${process.execPath}" "${BIN}" serve --port 0 --relay-port 0 --doors ledger --data "${data}"`,
      ],
      { env: testEnv(), ready: /Press Ctrl\+C to stop\./, name: 'serve under umask 022' },
    );
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(data)).toBe(0o700);
    for (const file of ['airlock.db', 'owner.token', 'default-agent.token'])
      expect(mode(join(data, file)), file).toBe(0o600);
    started.child.kill('SIGTERM');
    await started.exited;
  });
});

describe('the owner from a terminal', () => {
  it('agents add prints a token alone on stdout that works at once; revoke stops it within a second', async () => {
    const data = tempDir();
    const served = await startServe(['--doors', 'ledger', '--data', data]);
    const added = await run(['agents', 'add', 'ci-bot', '--data', data]);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^ak_[\w-]{43}\n$/);
    const token = added.stdout.trim();
    const client = await connectClient(`${served.url}/mcp`, { token, pin: MODERN_PROTOCOL });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    const listed = await run(['agents', 'list', '--json', '--data', data]);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'default', revokedAt: null }),
        expect.objectContaining({ name: 'ci-bot', revokedAt: null }),
      ]),
    );
    expect(listed.stdout).not.toContain('ak_');
    expect((await run(['agents', 'revoke', 'ci-bot', '--data', data])).code).toBe(0);
    await waitFor(
      async () =>
        (
          await fetch(`${served.url}/api/v1/events`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status === 401,
      { timeoutMs: 1500, message: 'the revoked token to be refused' },
    );
    const other = await connectClient(`${served.url}/mcp`, {
      token: served.agentToken!,
      pin: MODERN_PROTOCOL,
    });
    expect((await other.listTools()).tools.length).toBeGreaterThan(0);
    await other.close();
    await client.close().catch(() => undefined);
  });

  it('approvals approve --data answers as the owner; an agent token cannot', async () => {
    const data = tempDir();
    const served = await startServe(['--doors', 'ledger', '--data', data]);
    const client = await connectClient(`${served.url}/mcp`, {
      token: served.agentToken!,
      pin: MODERN_PROTOCOL,
    });
    const asked = toolJson(
      await client.callTool({ name: 'ledger_request_write_access', arguments: {} }),
    );
    expect(asked.code).toBe('approvalRequired');
    const asAgent = await run([
      'approvals',
      'approve',
      String(asked.approvalID),
      '--url',
      served.url,
      '--owner-token',
      served.agentToken!,
    ]);
    expect(asAgent.code).toBe(1);
    expect(asAgent.stderr).toContain('owner');
    const listed = await run(['approvals', 'list', '--url', served.url, '--data', data]);
    expect(listed.stdout).toContain(String(asked.approvalID));
    const approved = await run([
      'approvals',
      'approve',
      String(asked.approvalID),
      '--url',
      served.url,
      '--data',
      data,
    ]);
    expect(approved.code).toBe(0);
    expect(
      toolJson(await client.callTool({ name: 'ledger_request_write_access', arguments: {} })),
    ).toMatchObject({
      grantID: expect.any(String),
    });
    await client.close();
  });

  it('owner rotate replaces the owner token: the old one stops working, the new one works', async () => {
    const data = tempDir();
    const served = await startServe(['--doors', 'ledger', '--data', data]);
    const old = served.ownerToken!;
    const approvals = (token: string) =>
      fetch(`${served.url}/api/v1/approvals`, { headers: { authorization: `Bearer ${token}` } });
    expect((await approvals(old)).status).toBe(200);
    const rotated = await run(['owner', 'rotate', '--data', data]);
    expect(rotated.code).toBe(0);
    const fresh = printedCredentials(`or paste ${join(data, 'owner.token')})`).ownerToken!;
    expect(fresh).not.toBe(old);
    await waitFor(async () => (await approvals(old)).status === 401, {
      timeoutMs: 1500,
      message: 'the old owner token to be refused',
    });
    expect((await approvals(fresh)).status).toBe(200);
  });
});
