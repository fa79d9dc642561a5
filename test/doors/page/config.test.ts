import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/doors/page/config.js';

const TOKEN = 'a-token-of-sixteen-bytes-or-more';

describe('loadConfig', () => {
  it('returns the documented defaults, frozen, with allowedOrigins null', () => {
    const c = loadConfig({ WU_MCP_TOKEN: TOKEN });
    expect(c).toEqual({
      host: '127.0.0.1',
      port: 19100,
      timeout: 30000,
      authTimeout: 5000,
      maxPayload: 1048576,
      token: TOKEN,
      insecure: false,
      allowedOrigins: null,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads every variable when valid', () => {
    const c = loadConfig({
      WU_MCP_TOKEN: TOKEN,
      WU_MCP_HOST: '0.0.0.0',
      WU_MCP_PORT: '65535',
      WU_MCP_TIMEOUT: '50',
      WU_MCP_AUTH_TIMEOUT: '60000',
      WU_MCP_MAX_PAYLOAD: '16777216',
      WU_MCP_ORIGINS: 'http://localhost:3000, https://app.example',
    });
    expect(c).toMatchObject({
      host: '0.0.0.0',
      port: 65535,
      timeout: 50,
      authTimeout: 60000,
      maxPayload: 16777216,
    });
    expect([...c.allowedOrigins!]).toEqual(['http://localhost:3000', 'https://app.example']);
  });

  it('allows no token only with WU_MCP_INSECURE=1', () => {
    expect(loadConfig({ WU_MCP_INSECURE: '1' })).toMatchObject({ token: null, insecure: true });
    expect(loadConfig({ WU_MCP_INSECURE: '1', WU_MCP_TOKEN: TOKEN })).toMatchObject({
      token: TOKEN,
      insecure: true,
    });
  });

  const invalid: [string, Record<string, string>][] = [
    ['WU_MCP_TOKEN', {}],
    ['WU_MCP_TOKEN', { WU_MCP_TOKEN: 'short' }],
    ['WU_MCP_TOKEN', { WU_MCP_TOKEN: '' }],
    ['WU_MCP_TOKEN', { WU_MCP_TOKEN: 'é'.repeat(2049) }], // 4098 UTF-8 bytes
    ['WU_MCP_HOST', { WU_MCP_HOST: 'local host' }],
    ['WU_MCP_HOST', { WU_MCP_HOST: 'host/path' }],
    ['WU_MCP_HOST', { WU_MCP_HOST: '' }],
    ['WU_MCP_PORT', { WU_MCP_PORT: '0' }],
    ['WU_MCP_PORT', { WU_MCP_PORT: '65536' }],
    ['WU_MCP_PORT', { WU_MCP_PORT: '12.5' }],
    ['WU_MCP_PORT', { WU_MCP_PORT: 'abc' }],
    ['WU_MCP_TIMEOUT', { WU_MCP_TIMEOUT: '49' }],
    ['WU_MCP_TIMEOUT', { WU_MCP_TIMEOUT: '300001' }],
    ['WU_MCP_AUTH_TIMEOUT', { WU_MCP_AUTH_TIMEOUT: '49' }],
    ['WU_MCP_AUTH_TIMEOUT', { WU_MCP_AUTH_TIMEOUT: '60001' }],
    ['WU_MCP_MAX_PAYLOAD', { WU_MCP_MAX_PAYLOAD: '1023' }],
    ['WU_MCP_MAX_PAYLOAD', { WU_MCP_MAX_PAYLOAD: '16777217' }],
    ['WU_MCP_ORIGINS', { WU_MCP_ORIGINS: 'http://localhost:3000/path' }],
    ['WU_MCP_ORIGINS', { WU_MCP_ORIGINS: 'localhost:3000' }],
    ['WU_MCP_ORIGINS', { WU_MCP_ORIGINS: 'ftp://localhost' }],
    ['WU_MCP_ORIGINS', { WU_MCP_ORIGINS: ' , ' }],
    ['WU_MCP_INSECURE', { WU_MCP_INSECURE: 'true' }],
  ];
  it.each(invalid)('throws naming %s for %j', (variable, env) => {
    const withToken =
      'WU_MCP_TOKEN' in env || variable === 'WU_MCP_TOKEN' ? env : { WU_MCP_TOKEN: TOKEN, ...env };
    let error: unknown;
    try {
      loadConfig(withToken);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message.startsWith(variable)).toBe(true);
  });

  it('never puts the token in an error message', () => {
    const secret = 'x'.repeat(4097);
    expect(() => loadConfig({ WU_MCP_TOKEN: secret })).toThrow(/WU_MCP_TOKEN/);
    try {
      loadConfig({ WU_MCP_TOKEN: TOKEN, WU_MCP_PORT: 'nope' });
    } catch (e) {
      expect((e as Error).message).not.toContain(TOKEN);
    }
    try {
      loadConfig({ WU_MCP_TOKEN: secret });
    } catch (e) {
      expect((e as Error).message).not.toContain(secret);
    }
  });
});
