/**
 * The owner's one-time sign-in link (issue 25 §3): `airlock serve` prints it
 * to a terminal only — never into a pipe or a log another process reads.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe, type Served } from '../helpers/servers.js';
import { BIN, testEnv } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-link-'));
let served: Served | undefined;

afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('the sign-in link', () => {
  it('is not printed into a pipe; the output says how to sign in instead', async () => {
    served = await startServe(['--doors', 'ledger', '--data', join(dir, 'pipe')]);
    const out = served.stdout();
    expect(out).not.toMatch(/login#code=/);
    expect(out).toMatch(
      /Owner sign-in {4}http:\/\/localhost:\d+\/ {3}\(or paste .*owner\.token; a one-time link: run `airlock owner link/,
    );
  });

  it('is printed to a terminal', async () => {
    // `script` gives the server a pseudo-terminal as its stdout.
    const command = [
      process.execPath,
      BIN,
      'serve',
      '--port',
      '0',
      '--relay-port',
      '0',
      '--doors',
      'ledger',
      '--data',
      join(dir, 'tty'),
    ]
      .map((a) => `'${a}'`)
      .join(' ');
    // Its own process group, so the server under `script` ends with it.
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: testEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(() => /Press Ctrl\+C to stop\./.test(out), {
        message: 'serve to start in a terminal',
        timeoutMs: 20_000,
      });
      expect(out).toMatch(
        /Owner sign-in {4}http:\/\/localhost:\d+\/login#code=\S+ {3}\(once, within 10 minutes/,
      );
    } finally {
      const closed = new Promise((r) => child.once('close', r));
      process.kill(-child.pid!, 'SIGTERM');
      await closed;
    }
  });
});
