import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../../helpers/cli.js';
import { freePort, startProcess, startServe } from '../../helpers/servers.js';
import { toolJson } from '../../helpers/results.js';
import { authenticated, TOKEN } from './relay-helpers.js';

/** Each relay keeps its audit, approvals and policy in a folder of its own (not the checkout's ./.airlock). */
const relayData = () => ['--data', mkdtempSync(join(tmpdir(), 'airlock-relay-cli-'))];

describe('airlock relay', () => {
  it('exits 2 with one line naming a bad WU_MCP_* variable', async () => {
    const missing = await run(['relay', ...relayData()], testEnv({ WU_MCP_TOKEN: '' }));
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toContain('WU_MCP_TOKEN');
    const port = await run(
      ['relay', ...relayData()],
      testEnv({ WU_MCP_TOKEN: TOKEN, WU_MCP_PORT: '70000' }),
    );
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('WU_MCP_PORT');
    expect(port.stderr).not.toContain(TOKEN);
  });

  it('serves the 18 tools over stdio and forwards them to an authenticated bridge', async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'relay', ...relayData()],
      env: testEnv({ WU_MCP_TOKEN: TOKEN, WU_MCP_PORT: String(port) }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'relay-test', version: '1' });
    await client.connect(transport);
    expect((await client.listTools()).tools).toHaveLength(18);
    expect(toolJson(await client.callTool({ name: 'wu_conexion', arguments: {} }))).toEqual({
      puerto: port,
      host: '127.0.0.1',
      requiere_token: true,
      app_conectada: false,
    });
    const offline = await client.callTool({ name: 'wu_status', arguments: {} });
    expect(offline.isError).toBe(true);
    expect(toolJson(offline).code).toBe('WU_MCP_NOT_CONNECTED');

    const { b } = await authenticated(`ws://127.0.0.1:${port}`);
    b.ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as {
        type: string;
        id: string;
        command: string;
        params: unknown;
      };
      if (m.type === 'request')
        b.send({
          type: 'response',
          id: m.id,
          result: { echoed: m.command, params: m.params, secret: TOKEN },
        });
    });
    const r = await client.callTool({ name: 'wu_get_state', arguments: { path: 'a.b' } });
    expect(r.isError).toBeFalsy();
    // The relay scrubs its own token from whatever the page answers.
    expect(toolJson(r)).toEqual({
      echoed: 'get_state',
      params: { path: 'a.b' },
      secret: '[REDACTED]',
    });
    expect(stderr).toContain(`bridge listener on ws://127.0.0.1:${port}`);
    expect(stderr).not.toContain(TOKEN);
    b.ws.close();
    await client.close();
  });

  it('applies the config file policy and keeps its approvals in --data for the owner CLI', async () => {
    const data = mkdtempSync(join(tmpdir(), 'airlock-relay-policy-'));
    const config = join(data, 'config.json');
    writeFileSync(config, JSON.stringify({ policy: { readOnly: true } }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'relay', '--data', data, '--config', config],
      env: testEnv({ WU_MCP_TOKEN: TOKEN, WU_MCP_PORT: String(await freePort()) }) as Record<
        string,
        string
      >,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'relay-policy', version: '1' });
    await client.connect(transport);
    const write = await client.callTool({
      name: 'wu_set_state',
      arguments: { path: 'cart.items', value: [] },
    });
    expect(toolJson(write)).toMatchObject({ code: 'notAuthorized', rule: 'readOnly' });
    // The folder has the owner's token, so the owner CLI can answer there.
    const env = testEnv({ AIRLOCK_URL: `http://127.0.0.1:${await freePort()}` });
    const list = await run(['approvals', 'list', '--data', data], env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('No pending approvals.');
    await client.close();
  });

  it('shuts down cleanly on SIGTERM, and runs without a token only with WU_MCP_INSECURE=1', async () => {
    const port = await freePort();
    const relay = await startProcess(process.execPath, [BIN, 'relay', ...relayData()], {
      env: testEnv({ WU_MCP_INSECURE: '1', WU_MCP_PORT: String(port) }),
      stdin: 'pipe',
      ready: /MCP on stdio/,
      stream: 'stderr',
      name: 'relay',
    });
    expect(relay.stderr()).toContain('(insecure: no token)');
    relay.child.kill('SIGTERM');
    expect(await relay.exited).toBe(0);
    expect(relay.stdout()).toBe('');
  });

  it('airlock serve mounts the page door with its relay on --relay-port 0 and serves /bridge.js', async () => {
    const served = await startServe(
      [
        '--doors',
        'page',
        '--relay-port',
        '0',
        '--data',
        mkdtempSync(join(tmpdir(), 'airlock-page-')),
      ],
      testEnv({ AIRLOCK_LOG_LEVEL: 'info' }),
    );
    try {
      expect(served.stdout()).toContain('/mcp/page');
      const bridge = await fetch(`${served.url}/bridge.js`);
      expect(bridge.status).toBe(200);
      const token = (await (
        await fetch(`${served.url}/api/v1/page/bridge-token`, {
          headers: { authorization: `Bearer ${served.ownerToken!}` },
        })
      ).json()) as {
        url: string;
        token: string;
      };
      expect(token.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      expect(token.token.length).toBeGreaterThanOrEqual(16);
      expect(served.stderr()).toContain('page relay listening');
      expect(served.stderr()).not.toContain(token.token);
    } finally {
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
    }
  });
});
