import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Stdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, run, testEnv } from '../helpers/cli.js';
import { startServe } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { waitForOutput } from '../helpers/wait.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-cli-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('airlock command line', () => {
  it('--help lists the commands and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/serve[\s\S]*stdio[\s\S]*approvals/);
  });

  it.each([['serve'], ['stdio'], ['approvals']])(
    '%s --help answers with its options',
    async (cmd) => {
      const r = await run([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`airlock ${cmd}`);
    },
  );

  it('exits 2 with one line naming an unknown flag', async () => {
    const r = await run(['serve', '--prot', '1']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--prot');
  });

  it('exits 2 naming a bad value', async () => {
    const r = await run(['serve', '--port', 'abc']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port must be an integer from 0 to 65535, got 'abc'");
  });

  it('exits 2 naming a door this build does not have', async () => {
    const r = await run(['serve', '--doors', 'nope', '--data', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("'nope'");
  });

  it('exits 2 naming a bad limit in the config file', async () => {
    const d = tempDir();
    const file = join(d, 'config.json');
    writeFileSync(file, JSON.stringify({ limits: { ledger: { timeoutMs: -1 } } }));
    const r = await run(['serve', '--config', file, '--data', d]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('limits.ledger.timeoutMs');
  });

  it('exits 2 on a misspelt top-level key, naming the key meant, instead of starting unprotected', async () => {
    const d = tempDir();
    const file = join(d, 'config.json');
    writeFileSync(file, JSON.stringify({ polcy: { readOnly: ['scene'] } }));
    const r = await run(
      ['serve', '--config', file, '--data', d, '--port', '0', '--relay-port', '0'],
      testEnv(),
      10_000,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      `airlock: --config ${file}: unknown key \`polcy\` at the top level; did you mean \`policy\`?`,
    );
    expect(r.stdout).not.toContain('Airlock is serving');
  });

  it('exits 2 on a misspelt http key before serving anything', async () => {
    const d = tempDir();
    const file = join(d, 'config.json');
    writeFileSync(file, JSON.stringify({ http: { headersTimeoutM: 5000 } }));
    const r = await run(
      ['serve', '--config', file, '--data', d, '--port', '0', '--relay-port', '0'],
      testEnv(),
      10_000,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('did you mean `headersTimeoutMs`?');
    expect(r.stdout).not.toContain('Airlock is serving');
  });

  it('exits 2 on a config rule that names a mounted door but can never match its calls', async () => {
    const d = tempDir();
    const file = join(d, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        policy: { rules: [{ door: 'ledger', tool: 'ledger_apend', decision: 'deny' }] },
      }),
    );
    const r = await run([
      'serve',
      '--doors',
      'ledger',
      '--config',
      file,
      '--data',
      d,
      '--port',
      '0',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'policy.rules.0: No tool of ledger is named like `ledger_apend`; did you mean `ledger_append`?',
    );
  });

  it('airlock mcp exits 2 on a misspelt upstream key in --config', async () => {
    const d = tempDir();
    const file = join(d, 'config.json');
    writeFileSync(file, JSON.stringify({ upstreams: { fs: { command: 'node', arg: ['x'] } } }));
    const r = await run(['mcp', '--config', file, '--data', d], testEnv(), 10_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown key `arg` in `upstreams.fs`; did you mean `args`?');
  });

  it("exits 2 naming a door's bad environment setting", async () => {
    const r = await run(
      ['serve', '--doors', 'page', '--relay-port', '0', '--data', tempDir()],
      testEnv({ WU_MCP_TIMEOUT: '10' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('WU_MCP_TIMEOUT');
  });

  it('prints where a door listens of its own (the page relay) on start', async () => {
    const s = await startServe(['--doors', 'page', '--data', tempDir()]);
    // startServe resolves at the MCP URL line; the door banners follow it.
    await waitForOutput(s.stdout, /Page relay\s+ws:\/\/127\.0\.0\.1:\d+/);
    // With the page door, a SIGTERM within ~20 ms of the banner sometimes ends the
    // process by the signal (exit null) instead of the clean shutdown (the 200 ms
    // sleep here used to hide it). Stop it once it answers HTTP, as a user would.
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('refuses --allow-anonymous beyond loopback, naming the flag', async () => {
    const r = await run(['serve', '--host', '0.0.0.0', '--allow-anonymous', '--data', tempDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('--allow-anonymous');
  });

  it('binds beyond loopback, where MCP still needs the agent token it printed', async () => {
    const s = await startServe(['--host', '0.0.0.0', '--doors', 'ledger', '--data', tempDir()]);
    expect(s.agentToken).toMatch(/^ak_/);
    const port = new URL(s.url).port;
    const mcp = `http://127.0.0.1:${port}/mcp`;
    const bare = await fetch(mcp, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(bare.status).toBe(401);
    const client = await connectClient(mcp, { token: s.agentToken!, pin: MODERN_PROTOCOL });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ledger_echo');
    await client.close();
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
  });

  it('serve prints its URLs and a ready-to-paste MCP client config, and exits 0 on SIGTERM', async () => {
    const s = await startServe(['--doors', 'ledger', '--data', tempDir()]);
    // The start-up text ends with this line, after the client configurations.
    await waitForOutput(s.stdout, /Press Ctrl\+C to stop\./);
    const out = s.stdout();
    expect(out).toContain('/api/v1');
    expect(out).toContain('/mcp/ledger');
    const from = out.indexOf('{', out.search(/MCP client configuration over HTTP/));
    const json = out.slice(from, out.indexOf('\n}', from) + 2);
    expect(JSON.parse(json)).toEqual({
      mcpServers: {
        airlock: {
          type: 'http',
          url: `${s.url}/mcp`,
          headers: { Authorization: `Bearer ${s.agentToken!}` },
        },
      },
    });
    expect(s.agentToken).toMatch(/^ak_/);
    const health = (await (await fetch(`${s.url}/healthz`)).json()) as Record<string, unknown>;
    expect(health).toMatchObject({ status: 'ok', doors: ['ledger'], store: 'sqlite' });
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    // Logs are JSON lines on stderr.
    for (const line of s.stderr().trim().split('\n').filter(Boolean))
      expect(() => JSON.parse(line)).not.toThrow();
  });
});

describe('airlock stdio', () => {
  it('answers tools/list to an SDK v2 client, with only protocol messages on stdout', async () => {
    const client = new Client({ name: 'stdio-test', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'stdio', '--doors', 'ledger', '--data', tempDir()],
      env: testEnv() as Record<string, string>,
      stderr: 'pipe',
    });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('ledger_echo');
    const r = await client.callTool({ name: 'ledger_echo', arguments: { text: 'over stdio' } });
    expect(r.structuredContent).toEqual({ text: 'over stdio' });
    await client.close();
  });

  it('answers tools/list to an SDK v1 client', async () => {
    const client = new V1Client({ name: 'v1-stdio', version: '1' });
    await client.connect(
      new V1Stdio({
        command: process.execPath,
        args: [BIN, 'stdio', '--doors', 'ledger', '--data', tempDir()],
        env: testEnv() as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('ledger_append');
    await client.close();
  });
});
