/** `airlock catalog build` and `airlock openapi` through the real CLI (dist/), as users run them. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, run, testEnv } from '../../helpers/cli.js';
import { printedCredentials, startProcess, startServe } from '../../helpers/servers.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { toolText } from '../../helpers/results.js';
import { countingServer, fixture, json, type CountingServer } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-openapi-cli-'));
const SECRET = 'pets-secret-key-42';
let server: CountingServer;

beforeAll(async () => {
  server = await countingServer((req, res) =>
    json(res, 200, [{ id: 1, name: 'Rex', key: req.headers['api_key'] ?? null }]),
  );
});
afterAll(async () => {
  await server.close();
});

describe('airlock catalog build', () => {
  it('writes byte-identical catalogs on re-run, and -o - writes the same bytes to stdout', async () => {
    for (const doc of ['petstore.yaml', 'discord_openapi.json']) {
      const a = join(dir, `${doc}.a.json`);
      const b = join(dir, `${doc}.b.json`);
      expect((await run(['catalog', 'build', fixture(doc), '-o', a])).code).toBe(0);
      expect((await run(['catalog', 'build', fixture(doc), '-o', b])).code).toBe(0);
      expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
      if (doc === 'petstore.yaml')
        expect((await run(['catalog', 'build', fixture(doc), '-o', '-'])).stdout).toBe(
          readFileSync(a, 'utf8'),
        );
    }
  }, 60_000);

  it('an unreadable document exits 2 with one line naming the file and the JSON pointer', async () => {
    const bad = join(dir, 'broken.json');
    writeFileSync(
      bad,
      JSON.stringify({
        openapi: '3.0.0',
        info: {},
        paths: {
          '/a': { get: { parameters: [{ $ref: '#/components/parameters/Nope' }], responses: {} } },
        },
      }),
    );
    const r = await run(['catalog', 'build', bad, '-o', join(dir, 'out.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `airlock: ${bad}#/paths/~1a/get/parameters/0: $ref '#/components/parameters/Nope' points to nothing`,
    ]);
  });

  it('bad arguments exit 2 naming the value', async () => {
    expect((await run(['catalog', 'compile', 'x'])).stderr).toMatch(
      /unknown catalog action 'compile'/,
    );
    const r = await run(['catalog', 'build', fixture('petstore.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-o FILE/);
  });
});

describe('airlock openapi', () => {
  it('--help prints the options; bad arguments exit 2 naming the value', async () => {
    const help = await run(['openapi', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--base-url URL[\s\S]*--default name=value[\s\S]*--stdio/);
    for (const [args, message] of [
      [['--base-url', 'ftp://x'], /--base-url must be an http\(s\) URL, got 'ftp:\/\/x'/],
      [['--prefix', '9x'], /--prefix .* got '9x'/],
      [['--default', 'slug'], /--default must look like name=value, got 'slug'/],
      [['--header', 'no colon'], /--header must look like 'Name: value', got 'no colon'/],
    ] as const) {
      const r = await run(['openapi', fixture('petstore.yaml'), ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const missing = await run(['openapi', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml: no such file/);
  });

  it('a secret shorter than 4 characters exits 2 with one line naming the header it is for', async () => {
    const r = await run(
      [
        'openapi',
        fixture('real-petstore.json'),
        '--prefix',
        'pets',
        '--base-url',
        server.url,
        '--port',
        '0',
        '--data',
        join(dir, 'short-secret'),
      ],
      testEnv({ PETS_API_KEY: 'abc' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      "airlock: header 'api_key' (PETS_API_KEY) is 3 characters long; a secret needs at least 4, or it cannot be told apart from ordinary text and kept out of results. Configure the full secret.",
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('--stdio serves the three tools; the API key from the environment reaches the API and no output line', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        BIN,
        'openapi',
        fixture('real-petstore.json'),
        '--stdio',
        '--prefix',
        'pets',
        '--base-url',
        server.url,
        '--data',
        join(dir, 'stdio'),
      ],
      env: testEnv({ PETS_API_KEY: SECRET, AIRLOCK_LOG_LEVEL: 'debug' }) as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'openapi-stdio', version: '1' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'pets_call',
      'pets_describe',
      'pets_resources',
    ]);
    const r = await client.callTool({
      name: 'pets_call',
      arguments: { resource: 'pet', method: 'retrieve', args: { pet: 7 } },
    });
    expect(r.isError).not.toBe(true);
    expect(server.requests.at(-1)!.headers['api_key']).toBe(SECRET);
    expect(toolText(r)).toContain('[REDACTED]');
    expect(toolText(r)).not.toContain(SECRET);
    await client.close();
    expect(stderr).toMatch(/openapi request/);
    expect(stderr).not.toContain(SECRET);
  }, 60_000);

  it('serves the door alone over HTTP at /mcp/<prefix>', async () => {
    const served = await startProcess(
      process.execPath,
      [
        BIN,
        'openapi',
        fixture('petstore.yaml'),
        '--port',
        '0',
        '--prefix',
        'pets',
        '--base-url',
        server.url,
        '--data',
        join(dir, 'http'),
      ],
      { ready: /Press Ctrl\+C to stop\./, name: 'openapi', timeoutMs: 50_000 },
    );
    try {
      // The printed configuration carries the default agent's token.
      const { agentToken } = printedCredentials(served.stdout());
      const url = /MCP \(pets\)\s+(http:\/\/\S+)/.exec(served.stdout())![1]!;
      const client = await connectClient(url, {
        name: 'openapi-http',
        version: '1',
        token: agentToken!,
      });
      const r = await client.callTool({ name: 'pets_resources', arguments: { query: 'pets' } });
      expect(toolText(r)).toContain('list(params?) [read] — List all pets');
      await client.close();
    } finally {
      served.child.kill('SIGTERM');
    }
  }, 60_000);

  it('airlock serve with an unreadable --openapi document exits 2 naming the file', async () => {
    const r = await run([
      'serve',
      '--port',
      '0',
      '--data',
      join(dir, 'serve-bad'),
      '--doors',
      'ledger',
      '--openapi',
      join(dir, 'gone.yaml'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--openapi .*gone\.yaml: no such file/);
  });

  it('airlock serve mounts one door per --openapi, named by its prefix', async () => {
    const s = await startServe([
      '--data',
      join(dir, 'serve'),
      '--doors',
      'ledger',
      '--openapi',
      fixture('petstore.yaml'),
      '--base-url',
      server.url,
      '--prefix',
      'pets',
    ]);
    try {
      expect(s.stdout()).toMatch(/MCP \(pets\)/);
      const client = await connectClient(`${s.url}/mcp/pets`, {
        name: 'serve-openapi',
        version: '1',
        token: s.agentToken!,
      });
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'pets_call',
        'pets_describe',
        'pets_resources',
      ]);
      await client.close();
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  }, 60_000);
});
