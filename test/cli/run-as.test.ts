/**
 * `airlock serve --run-as USER` (issue 25 §4) through the real CLI: started
 * as root, the server makes the data folder USER's (0700, files 0600),
 * binds, drops to USER, and everything still works. Runs only where the
 * tests run as root (as in CI's container), with the system's `nobody`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServe, type Served } from '../helpers/servers.js';
import { run } from '../helpers/cli.js';
import { connectAgent } from '../web/mcp.js';

const root = process.getuid?.() === 0;
// nobody must be able to reach the data folder: not under a 0700 /tmp nor under a clone
// whose parents nobody may enter (CI's clone may sit anywhere), but /var/tmp (1777), else
// the repository's .tmp.
const scratch = existsSync('/var/tmp')
  ? '/var/tmp'
  : fileURLToPath(new URL('../../.tmp/', import.meta.url));
if (scratch !== '/var/tmp') {
  mkdirSync(scratch, { recursive: true, mode: 0o755 });
  chmodSync(scratch, 0o755);
}
const parent = mkdtempSync(join(scratch, 'run-as-'));
chmodSync(parent, 0o755);
const data = join(parent, 'data');
let served: Served | undefined;

afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(parent, { recursive: true, force: true });
});

const nobody = () => ({
  uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })),
  gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })),
});

describe.runIf(root)('airlock serve --run-as nobody', () => {
  it('binds as root, then runs as nobody with the data folder nobody’s (0700, files 0600), and still serves', async () => {
    served = await startServe(['--doors', 'ledger', '--data', data, '--run-as', 'nobody']);
    const { uid, gid } = nobody();
    const status = readFileSync(`/proc/${served.child.pid}/status`, 'utf8');
    const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
    expect(uids).toEqual([uid, uid, uid, uid]);
    const gids = /^Gid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status)!.slice(1).map(Number);
    expect(gids).toEqual([gid, gid, gid, gid]);

    const folder = statSync(data);
    expect([folder.uid, folder.mode & 0o777]).toEqual([uid, 0o700]);
    for (const name of readdirSync(data)) {
      const s = statSync(join(data, name));
      expect([name, s.uid, s.mode & 0o777]).toEqual([name, uid, s.isDirectory() ? 0o700 : 0o600]);
    }

    // Everything still works: an agent's call asks, the owner approves, the call runs.
    const agent = await connectAgent(served.url, 'run-as-agent', served.agentToken!);
    const asked = await agent.call('ledger_request_write_access');
    expect(asked.body.code).toBe('approvalRequired');
    const approve = await fetch(
      `${served.url}/api/v1/approvals/${String(asked.body.approvalID)}/approve`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${served.ownerToken!}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ resource: 'main' }),
      },
    );
    expect(approve.status).toBe(200);
    const appended = await agent.call('ledger_append', {
      operationID: randomUUID(),
      account: 'main',
      amount: 1,
      expectedVersion: null,
    });
    expect(appended.isError).toBe(false);
    await agent.close();
    expect((await fetch(`${served.url}/`)).status).toBe(200);
  });

  it('refuses an unknown user (exit 2)', async () => {
    const unknown = await run([
      'serve',
      '--data',
      join(parent, 'other'),
      '--run-as',
      'no-such-user-xyz',
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no user 'no-such-user-xyz'/);
  });
});
