/**
 * A stdio agent is named after its client, whole (issue 36): a client that
 * calls itself `@langchain/mcp-adapters` asks as `stdio:@langchain/mcp-adapters`
 * — not `stdio:@langchain` — and its approved call runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../helpers/cli.js';
import { freePort } from '../helpers/servers.js';
import { toolJson } from '../helpers/results.js';
import { agentOfConnection } from '../../src/kernel/authority/consent.js';
import { agentPart } from '../../src/kernel/connection.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-stdio-name-'));
const data = join(dir, 'data');
const config = join(dir, 'config.json');
let client: Client;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = testEnv({ AIRLOCK_URL: `http://127.0.0.1:${await freePort()}` });
  writeFileSync(
    config,
    JSON.stringify({ policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] } }),
  );
  client = new Client({ name: '@langchain/mcp-adapters', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'stdio', '--doors', 'ledger', '--data', data, '--config', config],
      env: env as Record<string, string>,
      stderr: 'pipe',
    }),
  );
});
afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('stdio agent names', () => {
  it('keeps a scoped client name whole in a connection id', () => {
    const id = `${agentPart('stdio:@langchain/mcp-adapters')}/process:1234`;
    expect(agentOfConnection(id)).toBe('stdio:@langchain/mcp-adapters');
    expect(agentOfConnection(`${agentPart('stdio:100%/x')}/process:1`)).toBe('stdio:100%/x');
  });

  it('asks as stdio:@langchain/mcp-adapters, and the approved call runs', async () => {
    const echo = async () =>
      toolJson(await client.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } }));
    const asked = await echo();
    expect(asked).toMatchObject({ code: 'approvalRequired' });
    const list = await run(['approvals', 'list', '--json', '--data', data], env);
    expect(list.code, list.stderr).toBe(0);
    const pending = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    expect(pending).toContainEqual(
      expect.objectContaining({ id: asked.approvalID, agent: 'stdio:@langchain/mcp-adapters' }),
    );
    const ok = await run(['approvals', 'approve', String(asked.approvalID), '--data', data], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await echo()).toEqual({ text: 'hi' });
  });
});
