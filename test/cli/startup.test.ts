/**
 * Start-up loads what every start needs and nothing else: the libraries
 * behind features most starts never touch (OAuth, passkeys, e-mail, web
 * push, OpenTelemetry, PDF, PostgreSQL, Redis, OCR) are loaded the first
 * time they are used. A stdio client starts Airlock for every session, and
 * every test here spawns servers: each of these costs start-up time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, testEnv } from '../helpers/cli.js';
import { startProcess } from '../helpers/servers.js';

const REGISTER = fileURLToPath(new URL('../fixtures/startup/register.mjs', import.meta.url));

/** Packages loaded on first use only. */
const ON_DEMAND = [
  'oidc-provider',
  '@simplewebauthn/server',
  'nodemailer',
  'web-push',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/sdk-trace-node',
  'pdf-lib',
  'pg',
  'ioredis',
  'tesseract.js',
];

const dir = mkdtempSync(join(tmpdir(), 'airlock-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const packagesIn = (file: string) =>
  new Set(
    readFileSync(file, 'utf8')
      .split('\n')
      .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
      .filter((name): name is string => !!name),
  );

describe('start-up', () => {
  it('serve loads none of the on-demand libraries until a feature needs one', async () => {
    const loaded = join(dir, 'loaded.txt');
    const served = await startProcess(
      process.execPath,
      [
        '--import',
        REGISTER,
        BIN,
        'serve',
        '--port',
        '0',
        '--relay-port',
        '0',
        '--data',
        join(dir, 'd'),
      ],
      {
        env: testEnv({ AIRLOCK_TEST_LOADED: loaded }),
        ready: /MCP \(all doors\)\s+(http:\/\/\S+)\/mcp/,
        name: 'serve',
      },
    );
    const atStart = packagesIn(loaded);
    // The hook sees what start-up does load (so an empty list proves nothing wrong).
    expect(atStart).toContain('better-sqlite3');
    expect(atStart).toContain('@modelcontextprotocol/server');
    expect(ON_DEMAND.filter((name) => atStart.has(name))).toEqual([]);

    // The first OAuth request loads the authorization server, and it answers.
    const origin = served.match[1]!;
    const metadata = await fetch(`${origin}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect(((await metadata.json()) as { issuer: string }).issuer).toBe(origin);
    expect(packagesIn(loaded)).toContain('oidc-provider');
    served.child.kill('SIGTERM');
    await served.exited;
  });
});
