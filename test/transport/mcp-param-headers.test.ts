/**
 * SEP-2243 custom headers: a 2026-era `tools/call` of a tool declaring
 * `x-mcp-header` is refused (HTTP 400, JSON-RPC -32020) when its
 * `Mcp-Param-*` header is missing, carries broken Base64, or disagrees with
 * the body; Base64-wrapped and literal values that agree are served. Over
 * real HTTP against `airlock serve --doors conformance`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe, type Served } from '../helpers/servers.js';
import { testEnv } from '../helpers/cli.js';
import { MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import {
  decodeParamValue,
  paramHeaderMismatch,
} from '../../src/transport/mcp/mcp-param-headers.js';

describe('Mcp-Param header values', () => {
  it('decode canonical Base64 in the =?base64?…?= wrapper and take anything else literally', () => {
    const hello = Buffer.from('Hello').toString('base64');
    expect(decodeParamValue(`=?base64?${hello}?=`)).toBe('Hello');
    expect(decodeParamValue(`=?base64?${Buffer.from('日本').toString('base64')}?=`)).toBe('日本');
    expect(decodeParamValue('=?base64?SGVsbG8?=')).toBeUndefined(); // padding missing
    expect(decodeParamValue('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(decodeParamValue(hello)).toBe(hello);
    expect(decodeParamValue(`=?base64?${hello}`)).toBe(`=?base64?${hello}`);
    expect(decodeParamValue('  eu-west  ')).toBe('eu-west');
  });

  it('compare numbers numerically and skip arguments the call leaves out', () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'number', 'x-mcp-header': 'N' }, s: { type: 'string' } },
    };
    const headers = (h: Record<string, string>) => (name: string) => h[name];
    expect(paramHeaderMismatch(schema, { n: 42 }, headers({ 'Mcp-Param-N': '42.0' }))).toBeNull();
    expect(paramHeaderMismatch(schema, {}, headers({}))).toBeNull();
    expect(paramHeaderMismatch(schema, { n: 42 }, headers({ 'Mcp-Param-N': '43' }))).toMatchObject({
      data: { mismatch: { header: 'Mcp-Param-N' } },
    });
  });
});

describe('a 2026-era tools/call of a tool declaring x-mcp-header', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-param-headers-'));
  let served: Served;
  beforeAll(async () => {
    served = await startServe(
      ['--doors', 'conformance', '--allow-anonymous', '--data', dir],
      testEnv({ AIRLOCK_ENABLE_TEST_DOORS: '1' }),
    );
  });
  afterAll(async () => {
    served?.child.kill('SIGTERM');
    await served?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  let id = 1;
  const call = async (region: string, headers: Record<string, string>) => {
    const res = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_PROTOCOL,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_custom_header',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method: 'tools/call',
        params: {
          name: 'test_custom_header',
          arguments: { region },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL,
            'io.modelcontextprotocol/clientInfo': { name: 'param-headers-test', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const text = await res.text();
    const json = text.startsWith('{')
      ? JSON.parse(text)
      : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
    return {
      status: res.status,
      body: json as { result?: unknown; error?: { code: number; message: string } },
    };
  };

  it('publishes the declaration in tools/list', async () => {
    const listed = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_PROTOCOL,
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL,
            'io.modelcontextprotocol/clientInfo': { name: 'param-headers-test', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    expect(await listed.text()).toContain('"x-mcp-header":"Region"');
  });

  it('serves a header that agrees, literal or Base64', async () => {
    const plain = await call('eu-west', { 'Mcp-Param-Region': 'eu-west' });
    expect(plain.status).toBe(200);
    expect(plain.body.error).toBeUndefined();
    const wrapped = await call('Hello', {
      'Mcp-Param-Region': `=?base64?${Buffer.from('Hello').toString('base64')}?=`,
    });
    expect(wrapped.status).toBe(200);
    expect(wrapped.body.error).toBeUndefined();
  });

  it('refuses a missing, undecodable or different header with 400 and -32020, naming the header', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { 'Mcp-Param-Region': '=?base64?SGVsbG8?=' },
      { 'Mcp-Param-Region': 'us-east' },
    ]) {
      const r = await call('Hello', headers);
      expect(r.status).toBe(400);
      expect(r.body.error?.code).toBe(-32020);
      expect(r.body.error?.message).toMatch(/Mcp-Param-Region/);
    }
  });
});
