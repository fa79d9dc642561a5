/** An openapi door pointed at the workspace's own API (authority.md §3 item 7). */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/cli.js';
import { freePort, startServe } from '../helpers/servers.js';
import { isSelf } from '../../src/cli/workspace/self-target.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-self-'));
const spec = join(dir, 'api.json');
writeFileSync(
  spec,
  JSON.stringify({
    openapi: '3.0.3',
    info: { title: 'Self', version: '1' },
    paths: { '/api/v1/grants': { get: { responses: { '200': { description: 'ok' } } } } },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a self-targeting openapi door', () => {
  it('names this server whatever loopback name the URL uses', () => {
    expect(isSelf('http://127.0.0.1:7300/api', '127.0.0.1', 7300)).toBe(true);
    expect(isSelf('http://localhost:7300', '127.0.0.1', 7300)).toBe(true);
    expect(isSelf('http://[::1]:7300', '127.0.0.1', 7300)).toBe(true);
    expect(isSelf('http://127.0.0.1:7301', '127.0.0.1', 7300)).toBe(false);
    expect(isSelf('https://api.example.com', '127.0.0.1', 443)).toBe(false);
  });

  it('is refused at start with exit 2 unless --allow-self is given', async () => {
    const port = await freePort();
    const door = [
      '--doors',
      'openapi',
      '--openapi',
      spec,
      '--base-url',
      `http://localhost:${port}`,
      '--data',
      join(dir, 'data'),
    ];
    const args = ['serve', '--port', String(port), '--relay-port', '0', ...door];
    const refused = await run(args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/own API.*--allow-self/);

    // startServe adds --port 0 first; the later --port wins.
    const allowed = await startServe([...door, '--port', String(port), '--allow-self']);
    try {
      expect(allowed.url).toContain(String(port));
    } finally {
      allowed.child.kill('SIGTERM');
      await allowed.exited;
    }
  });
});
