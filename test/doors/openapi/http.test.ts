/** Request building and HTTP details: path values can never leave the path (property-based), Retry-After, Link headers. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRequest, unsafePathValue } from '../../../src/doors/openapi/http/build.js';
import { retryAfterMs } from '../../../src/doors/openapi/http/send.js';
import { nextLink } from '../../../src/doors/openapi/http/iterate.js';
import { credentialsFor, envNamesFor } from '../../../src/doors/openapi/http/auth.js';
import type { MethodEntry } from '../../../src/doors/openapi/catalog-index.js';

const method: MethodEntry = {
  name: 'retrieve',
  kind: 'read',
  summary: '',
  http: 'GET',
  path: '/workspaces/{slug}/items/{item_id}/',
  pathIds: [],
  params: [
    { name: 'tags', in: 'query', required: false, type: 'string[]', schema: {}, explode: false },
  ],
  returns: 'any',
  example: {},
  iterates: false,
};
const base = new URL('https://api.example.com/api/v1');

describe('path values', () => {
  it('any accepted value stays one percent-encoded segment on the base URL origin and path', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (value) => {
        if (unsafePathValue(value) !== null) return;
        const req = buildRequest({
          method,
          base,
          pathValues: { slug: 'acme', item_id: value },
          params: {},
          data: undefined,
          credentials: { headers: {}, query: [], cookies: [] },
          extraHeaders: {},
        });
        expect(req.url.origin).toBe(base.origin);
        const segments = req.url.pathname.split('/');
        expect(segments.slice(0, 5)).toEqual(['', 'api', 'v1', 'workspaces', 'acme']);
        expect(segments).toHaveLength(8);
        expect(decodeURIComponent(segments[6]!)).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses values that would change the path', () => {
    for (const v of [
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a\\b',
      'https://evil.example',
      '//evil.example',
      'javascript:alert(1)',
      '%2e%2e',
      'a%2Fb',
      'a\nb',
    ])
      expect(unsafePathValue(v), JSON.stringify(v)).not.toBeNull();
    for (const v of ['abc', '123', 'a b', 'a?b#c', 'example.com', 'ENG-12', 'näme'])
      expect(unsafePathValue(v), v).toBeNull();
  });

  it('query arrays follow style and explode', () => {
    const req = buildRequest({
      method,
      base,
      pathValues: { slug: 's', item_id: 'i' },
      params: { tags: ['a', 'b'] },
      data: undefined,
      credentials: { headers: {}, query: [['api_key', 'k']], cookies: [] },
      extraHeaders: {},
    });
    expect(req.url.search).toBe('?tags=a%2Cb&api_key=k');
    expect(req.label).toBe('GET /workspaces/{slug}/items/{item_id}/');
  });
});

describe('HTTP details', () => {
  it('Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('the rel="next" target of a Link header', () => {
    expect(nextLink('<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last"')).toBe(
      'https://a/x?page=2',
    );
    expect(nextLink('<https://a/x?page=1>; rel="prev"')).toBeUndefined();
    expect(nextLink(null)).toBeUndefined();
  });
});

describe('credentials', () => {
  const schemes = {
    BotToken: { type: 'apiKey', in: 'header', name: 'Authorization' },
    basic: { type: 'http', scheme: 'basic' },
    OAuth2: { type: 'oauth2' },
  } as const;

  it('env names follow the prefix and the scheme name in upper snake case', () => {
    expect(envNamesFor('discord', 'BotToken', schemes.BotToken)).toEqual([
      'DISCORD_BOT_TOKEN',
      'DISCORD_API_KEY',
    ]);
    expect(envNamesFor('discord', 'OAuth2', schemes.OAuth2)).toEqual([
      'DISCORD_OAUTH2',
      'DISCORD_TOKEN',
    ]);
  });

  it('configured credentials win over an optional anonymous alternative', () => {
    const source = {
      prefix: 'discord',
      schemes: { ...schemes },
      env: { DISCORD_BOT_TOKEN: 'Bot abc' },
    };
    expect(credentialsFor(source, [[], ['BotToken']]).headers).toEqual({
      Authorization: 'Bot abc',
    });
    expect(credentialsFor(source, [['OAuth2'], ['BotToken']]).headers).toEqual({
      Authorization: 'Bot abc',
    });
    expect(credentialsFor({ ...source, env: {} }, [[], ['BotToken']]).headers).toEqual({});
  });

  it('basic auth from <PREFIX>_USERNAME and <PREFIX>_PASSWORD', () => {
    const source = {
      prefix: 'svc',
      schemes: { ...schemes },
      env: { SVC_USERNAME: 'u', SVC_PASSWORD: 'p' },
    };
    expect(credentialsFor(source, [['basic']]).headers).toEqual({
      Authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
    });
  });
});
