/**
 * The owner's CLI finds its server (issue 27 item 7): `serve` records its
 * address in the data folder, `airlock approvals --data DIR` talks to that
 * server wherever it listens and says who answered, shows each ask's
 * preview, and refuses to answer from under a running server that does not
 * answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { run, testEnv } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-finds-server-'));
const data = join(dir, 'data');
const config = join(dir, 'config.json');
let served: Served;
// No AIRLOCK_URL: the CLI must find the server through the folder.
const env = () => {
  const e = testEnv();
  delete e.AIRLOCK_URL;
  return e;
};

beforeAll(async () => {
  writeFileSync(
    config,
    JSON.stringify({ policy: { rules: [{ tool: 'ledger_echo', decision: 'ask' }] } }),
  );
  served = await startServe(['--data', data, '--doors', 'ledger', '--config', config]);
});
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('airlock approvals list --data DIR', () => {
  it('finds the server running on the folder, on its own port, says so, and shows the ask’s preview', async () => {
    const client = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
    const asked = toolJson(
      await client.callTool({ name: 'ledger_echo', arguments: { text: 'preview me' } }),
    );
    await client.close();
    expect(served.url).not.toBe('http://127.0.0.1:7300');
    const list = await run(['approvals', 'list', '--data', data], env());
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(
      `Answered by Airlock at ${served.url} (the server running on ${data}).`,
    );
    expect(list.stdout).toContain(String(asked.approvalID));
    expect(list.stdout).toContain('ledger/ledger_echo');
    // The first lines of its preview, under the ask.
    expect(list.stdout).toMatch(/\n {4}ledger_echo \(read\)\n {4}Tool: ledger_echo\n/);
  });

  it('removes the record when the server stops', async () => {
    const other = join(dir, 'stops');
    const s = await startServe(['--data', other, '--doors', 'ledger']);
    expect(existsSync(join(other, 'server.json'))).toBe(true);
    s.child.kill('SIGTERM');
    await s.exited;
    expect(existsSync(join(other, 'server.json'))).toBe(false);
  });

  it('refuses to answer from the store when the folder’s running server does not answer', async () => {
    const silent = join(dir, 'silent');
    const seeded = await run(['agents', 'list', '--data', silent], env());
    expect(seeded.code, seeded.stderr).toBe(0);
    // A live process (this test's) recorded at an address where nothing listens.
    writeFileSync(
      join(silent, 'server.json'),
      JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid }),
    );
    const list = await run(['approvals', 'list', '--data', silent], env());
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(
      `the Airlock server running on ${silent} (pid ${process.pid}, http://127.0.0.1:9) did not answer`,
    );
  });
});
