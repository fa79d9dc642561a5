/**
 * Configured secrets stay out of everything the door shows, in every form
 * they take on the wire (raw, percent- and form-encoded, base64,
 * JSON-escaped), and secrets too short to scrub are refused up front.
 * Against a loopback server that echoes what it received.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSpec } from '../../../src/doors/openapi/compile/compile.js';
import { createOpenapiDoor } from '../../../src/doors/openapi/door.js';
import { createScrubber } from '../../../src/doors/openapi/secrets.js';
import type { Catalog } from '../../../src/doors/openapi/catalog.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import {
  countingServer,
  json,
  mountDoor,
  recordingLogger,
  type CountingServer,
  type MountedDoor,
} from './helpers.js';

const KEY = 'Qk~ey!(secret) 42';
const QUOTED_KEY = 'k"ey\\back-slash';
const USER = 'robot';
const PASSWORD = 'pa55-word';

const get = (summary: string, scheme: string) => ({
  get: { summary, security: [{ [scheme]: [] }], responses: { '200': { description: 'ok' } } },
});

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Echo', version: '1' },
  components: {
    securitySchemes: {
      key: { type: 'apiKey', in: 'query', name: 'api_key' },
      basic: { type: 'http', scheme: 'basic' },
    },
  },
  paths: {
    '/echo/': get('Fails, echoing the request URL', 'key'),
    '/text/': get('The key as plain text', 'key'),
    '/b64/': get('The key in base64', 'key'),
    '/basic/': get('The basic credentials, decoded', 'basic'),
  },
};

const keyOf = (req: IncomingMessage) =>
  new URL(req.url ?? '/', 'http://x').searchParams.get('api_key') ?? '';

function handler(req: IncomingMessage, res: ServerResponse) {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/echo/')
    return json(res, 500, {
      error: 'internal',
      url: req.url,
      lower: req.url?.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    });
  if (path === '/text/') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    return res.end(`key=${keyOf(req)}`);
  }
  if (path === '/b64/')
    return json(res, 200, { token: Buffer.from(keyOf(req)).toString('base64') });
  const auth = req.headers.authorization ?? '';
  const pair = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString();
  return json(res, 200, { auth, pair, password: pair.slice(pair.indexOf(':') + 1) });
}

/** What a key looks like in a query string, as `URLSearchParams` writes it. */
const formEncoded = (value: string) => new URLSearchParams([['', value]]).toString().slice(1);

let catalog: Catalog;
let server: CountingServer;
let door: MountedDoor;
const logLines: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-openapi-secrets-'));
  writeFileSync(join(dir, 'echo.json'), JSON.stringify(DOC));
  catalog = await compileSpec(join(dir, 'echo.json'));
  server = await countingServer(handler);
  door = await mountDoor(catalog, {
    prefix: 'echo',
    baseUrl: server.url,
    env: { ECHO_API_KEY: KEY, ECHO_USERNAME: USER, ECHO_PASSWORD: PASSWORD },
    logger: recordingLogger(logLines),
  });
});
afterAll(async () => {
  await door.close();
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
});

describe('secrets in every encoding', () => {
  it('a query API key is scrubbed in its form encoding from an upstream 500 that echoes the URL, and from logs and audit', async () => {
    const r = await door.call('call', { resource: 'echo', method: 'list' });
    expect(keyOf(server.requests[0] as unknown as IncomingMessage)).toBe(KEY);
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.text)).toMatchObject({ code: 'upstreamError', status: 500 });
    expect(r.text).toContain('api_key=[REDACTED]');
    const forms = [
      KEY,
      encodeURIComponent(KEY),
      formEncoded(KEY),
      formEncoded(KEY).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    ];
    for (const form of forms) expect(r.text, form).not.toContain(form);
    const audit = await door.tk.kernel.audit.exportJsonLines();
    for (const form of forms) {
      for (const line of logLines) expect(line, form).not.toContain(form);
      expect(audit, form).not.toContain(form);
    }
  });

  it('a key with quotes and backslashes is scrubbed where the result shows it JSON-escaped', async () => {
    const quoted = await mountDoor(catalog, {
      prefix: 'quote',
      baseUrl: server.url,
      env: { QUOTE_API_KEY: QUOTED_KEY },
    });
    try {
      const r = await quoted.call('call', { resource: 'text', method: 'list' });
      expect(keyOf(server.requests[0] as unknown as IncomingMessage)).toBe(QUOTED_KEY);
      expect(r.text).toBe(JSON.stringify('key=[REDACTED]'));
      expect(r.text).not.toContain(JSON.stringify(QUOTED_KEY).slice(1, -1));
    } finally {
      await quoted.close();
    }
  });

  it('a key echoed in base64 is scrubbed', async () => {
    const r = await door.call('call', { resource: 'b64', method: 'list' });
    expect(r.isError).toBe(false);
    expect(r.text).not.toContain(Buffer.from(KEY).toString('base64').replace(/=+$/, ''));
    expect(JSON.parse(r.text)).toMatchObject({ token: expect.stringContaining('[REDACTED]') });
  });

  it('a basic-auth password is scrubbed alone, in user:password, and in its base64', async () => {
    const r = await door.call('call', { resource: 'basic', method: 'list' });
    expect(server.requests[0]!.headers.authorization).toBe(
      `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
    );
    expect(JSON.parse(r.text)).toEqual({
      auth: 'Basic [REDACTED]',
      pair: '[REDACTED]',
      password: '[REDACTED]',
    });
  });
});

describe('the scrubber', () => {
  it('any secret of 4 or more characters is scrubbed from a text in each of its wire forms', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 4, maxLength: 24 }),
        fc.string({ maxLength: 8 }),
        (secret, around) => {
          const scrub = createScrubber([secret]);
          const base64 = Buffer.from(secret).toString('base64');
          const forms = [
            secret,
            encodeURIComponent(secret),
            formEncoded(secret),
            formEncoded(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
            base64,
            base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
            JSON.stringify(secret).slice(1, -1),
          ];
          for (const form of forms) {
            const shown = scrub(`${around}${form}${around}`);
            expect(shown, form).not.toContain(form);
            expect(shown).toContain('[REDACTED]');
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('secrets too short to scrub', () => {
  const open = (env: Record<string, string>, headers?: Record<string, string>) => () =>
    createOpenapiDoor({
      catalog,
      prefix: 'echo',
      baseUrl: server.url,
      env,
      headers,
      logger: silentLogger,
    });

  it('are refused when the door is configured, naming the parameter or header they are for', () => {
    expect(open({ ECHO_API_KEY: 'abc' })).toThrow(
      /^query parameter 'api_key' \(ECHO_API_KEY\) is 3 characters long; .*at least 4/,
    );
    expect(open({ ECHO_USERNAME: 'someone', ECHO_PASSWORD: 'pw' })).toThrow(
      /^header 'Authorization' \(basic, ECHO_PASSWORD\) is 2 characters long/,
    );
    expect(open({ T: 'ab' }, { 'X-Trace-Token': '${T}' })).toThrow(
      /^header 'X-Trace-Token' \(\$\{T\}\) is 2 characters long/,
    );
    expect(open({}, { Authorization: 'Bearer xyz' })).toThrow(/^header 'Authorization' is 3/);
    try {
      open({ ECHO_API_KEY: 'abc' })();
    } catch (error) {
      // The workspace answers a ConfigError as a usage error (exit 2).
      expect((error as Error).name).toBe('ConfigError');
    }
  });
});
