/**
 * With no server on the folder, `airlock approvals` and `airlock policy`
 * answer in its store directly (authority.md §3): a stdio process keeps its
 * approvals and policy there.
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

const dir = mkdtempSync(join(tmpdir(), 'airlock-owner-direct-'));
const data = join(dir, 'data');
let client: Client;
let env: NodeJS.ProcessEnv;
const config = join(dir, 'config.json');

beforeAll(async () => {
  // Nothing listens there: the CLI must fall back to the store.
  env = testEnv({ AIRLOCK_URL: `http://127.0.0.1:${await freePort()}` });
  writeFileSync(
    config,
    JSON.stringify({ policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] } }),
  );
  client = new Client({ name: 'desk-client', version: '1' });
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

const echo = async () =>
  toolJson(await client.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } }));

describe('owner commands without a server', () => {
  it("list and approve a stdio process's policy ask in the folder's store", async () => {
    const asked = await echo();
    expect(asked).toMatchObject({ code: 'approvalRequired', rule: 'config-1' });
    const list = await run(['approvals', 'list', '--json', '--data', data], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toMatch(/answering in the store/);
    const pending = JSON.parse(list.stdout) as Array<Record<string, unknown>>;
    expect(pending).toContainEqual(
      expect.objectContaining({ id: asked.approvalID, kind: 'policy', agent: 'stdio:desk-client' }),
    );
    const ok = await run(['approvals', 'approve', String(asked.approvalID), '--data', data], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await echo()).toEqual({ text: 'hi' });
  });

  it('policy edits in the store reach the running stdio process', async () => {
    const added = await run(
      [
        'policy',
        'add',
        'deny',
        'ledger',
        '--tool',
        'ledger_echo',
        '--position',
        '1',
        '--data',
        data,
        '--config',
        config,
      ],
      env,
    );
    // The config file's rule stays first: position 1 is refused, naming the range.
    expect(added.code).toBe(1);
    expect(added.stderr).toMatch(/position/);
    const ro = await run(['policy', 'read-only', 'on', '--data', data], env);
    expect(ro.code, ro.stderr).toBe(0);
    // No wait: the running process sees the edit through its store's change mark.
    const r = await client.callTool({
      name: 'ledger_append',
      arguments: {
        operationID: '6f1c2a52-3d55-4d1e-9a63-1a2b3c4d5e6f',
        account: 'a',
        amount: 1,
        expectedVersion: 0,
      },
    });
    expect(toolJson(r)).toMatchObject({ code: 'notAuthorized', rule: 'readOnly' });
  });

  it('without the folder’s owner token nothing is answered', async () => {
    const r = await run(['approvals', 'list', '--data', data, '--owner-token', 'ok_wrong'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/owner token does not match/);
  });
});
