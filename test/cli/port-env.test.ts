/** `AIRLOCK_PORT` picks the HTTP port when no `--port` is given (issue 26: `npm start` takes no flags without `--`). */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, testEnv } from '../helpers/cli.js';
import { freePort, startProcess } from '../helpers/servers.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-port-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('AIRLOCK_PORT', () => {
  it('serves on the port it names when --port is not given', async () => {
    const port = await freePort();
    const served = await startProcess(
      process.execPath,
      [BIN, 'serve', '--data', dir, '--relay-port', '0'],
      {
        env: testEnv({ AIRLOCK_PORT: String(port) }),
        ready: /Press Ctrl\+C to stop\./,
        name: 'serve',
      },
    );
    try {
      expect(served.stdout()).toContain(`http://localhost:${port}/mcp`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
  });
});
