import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/cli.js';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-approvals-'));
let served: Served;
// --token sets the token of the agent 'default'; the CLI answers as the owner (--data).
const TOKEN = 'approvals-test-token-123';

beforeAll(async () => {
  served = await startServe(['--doors', 'ledger', '--data', dir, '--token', TOKEN]);
});
afterAll(async () => {
  served.child.kill('SIGTERM');
  await served.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function requestAccess(name: string) {
  const client = await connectClient(new URL('/mcp', served.url), {
    name,
    version: '1',
    token: TOKEN,
  });
  const ask = async () =>
    toolJson(await client.callTool({ name: 'ledger_request_write_access', arguments: {} }));
  return { client, ask, first: await ask() };
}

describe('airlock approvals', () => {
  it('lists pending requests, approves one for a chosen resource, and the agent gets its grant', async () => {
    const { client, ask, first } = await requestAccess('agent-a');
    const args = ['--url', served.url, '--data', dir];
    const list = await run(['approvals', 'list', '--json', ...args]);
    expect(list.code).toBe(0);
    const pending = JSON.parse(list.stdout) as { id: string; door: string; capability: string }[];
    expect(pending).toContainEqual(
      expect.objectContaining({ id: first.approvalID, door: 'ledger', capability: 'write' }),
    );
    const human = await run(['approvals', 'list', ...args]);
    expect(human.stdout).toContain(String(first.approvalID));
    const ok = await run([
      'approvals',
      'approve',
      String(first.approvalID),
      '--project',
      'books',
      ...args,
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('Approved');
    expect(await ask()).toMatchObject({ grantID: expect.any(String) });
    await client.close();
  });

  it('denies a request, and the agent is told so', async () => {
    const { client, ask, first } = await requestAccess('agent-b');
    const r = await run([
      'approvals',
      'deny',
      String(first.approvalID),
      '--url',
      served.url,
      '--data',
      dir,
    ]);
    expect(r.code).toBe(0);
    expect((await ask()).code).toBe('approvalDenied');
    await client.close();
  });

  it('says clearly when the id is unknown, the owner token is wrong, or the server is not running', async () => {
    const unknown = await run(['approvals', 'approve', 'nope', '--url', served.url, '--data', dir]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No approval nope');
    const wrong = await run(['approvals', 'list', '--url', served.url, '--owner-token', 'wrong']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('bearer token');
    const down = await run(['approvals', 'list', '--url', 'http://127.0.0.1:1']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach');
  });
});
