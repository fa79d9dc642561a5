/**
 * The mcp door from the command line (built dist/): `airlock mcp
 * NAME=COMMAND…` over stdio with a real npm upstream, its help, and the
 * usage errors for bad upstream flags (exit 2, one line naming the value).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../../helpers/cli.js';
import { serverBin } from './helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { startServe } from '../../helpers/servers.js';

let dir: string;
let data: string;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-mcp-cli-')));
  data = mkdtempSync(join(tmpdir(), 'airlock-mcp-data-'));
  writeFileSync(join(dir, 'note.txt'), 'from the folder');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

describe('airlock mcp', () => {
  it('--help explains the upstream forms, the naming and how to override an effect', async () => {
    const r = await run(['mcp', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NAME=COMMAND');
    expect(r.stdout).toContain('NAME=https://host/mcp');
    expect(r.stdout).toContain('NAME_<tool>');
    expect(r.stdout).toMatch(/"tools": \{"write_file": \{"effect": "write"\}\}/);
    const serve = await run(['serve', '--help']);
    expect(serve.stdout).toContain('--upstream NAME=CMD');
    expect(serve.stdout).toContain('--upstream-header');
  });

  it('a bad upstream flag is exit 2 with one line naming it', async () => {
    const bad = await run(['mcp', 'bad_name=node x.js', '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain("'bad_name=node x.js'");
    const header = await run([
      'serve',
      '--upstream-header',
      "gh:'Authorization: x'",
      '--data',
      data,
    ]);
    expect(header.code).toBe(2);
    expect(header.stderr).toContain('no HTTP upstream named gh');
    const env = await run([
      'mcp',
      'gh=https://example.invalid/mcp',
      '--upstream-header',
      'gh:Authorization: Bearer ${AIRLOCK_TEST_UNSET_VAR}',
      '--data',
      data,
    ]);
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('AIRLOCK_TEST_UNSET_VAR is not set');
  });

  it('airlock policy add deny fs:write_file, fs an upstream, is door mcp and target fs:write_file, and policy test derives the target', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'airlock-mcp-policy-'));
    const served = await startServe([
      '--doors',
      'notes',
      '--data',
      folder,
      '--upstream',
      `fs=${process.execPath} ${serverBin('filesystem')} ${dir}`,
    ]);
    try {
      const owner = ['--url', served.url, '--data', folder];
      const added = await run(['policy', 'add', 'deny', 'fs:write_file', ...owner]);
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toMatch(/Added\s+1\. deny\s+door=mcp target=fs:write_file/);
      const args = JSON.stringify({ path: join(dir, 'x.txt'), content: 'x' });
      const tested = await run([
        'policy',
        'test',
        '--door',
        'fs',
        '--tool',
        'fs_write_file',
        '--args',
        args,
        ...owner,
      ]);
      expect(tested.code, tested.stderr).toBe(0);
      expect(tested.stdout).toMatch(/^deny\s+by\s+1\. deny .*\[destructive on fs:write_file\]/);
      const never = await run([
        'policy',
        'add',
        'deny',
        '--door',
        'fs',
        '--target',
        'write_file',
        ...owner,
      ]);
      expect(never.code).toBe(1);
      expect(never.stderr).toContain('`fs:<tool>`');
      const forced = await run([
        'policy',
        'add',
        'deny',
        '--door',
        'fs',
        '--target',
        'write_file',
        '--force',
        ...owner,
      ]);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toMatch(/warning: .*never matches/);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
      rmSync(folder, { recursive: true, force: true });
    }
  }, 30_000);

  it('serves a real upstream over stdio: only protocol on stdout, its stderr in Airlock’s structured log', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        BIN,
        'mcp',
        `fs=${process.execPath} ${serverBin('filesystem')} ${dir}`,
        '--data',
        data,
      ],
      env: testEnv({ AIRLOCK_LOG_LEVEL: 'info' }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'cli-test', version: '1' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('fs_read_text_file');
      const r = (await client.callTool({
        name: 'fs_read_text_file',
        arguments: { path: join(dir, 'note.txt') },
      })) as { content: Array<{ text: string }> };
      expect(r.content[0]!.text).toBe('from the folder');
      await waitFor(() => stderr.includes('Secure MCP Filesystem Server running on stdio'), {
        timeoutMs: 5_000,
      });
      const line = stderr.split('\n').find((l) => l.includes('Secure MCP Filesystem Server'))!;
      expect(JSON.parse(line)).toMatchObject({ upstream: 'fs', msg: 'upstream stderr' });
    } finally {
      await client.close();
    }
  }, 30_000);
});
