import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash, createHmac } from 'node:crypto';
import { hmacSha256, sha256 } from '../../../src/web/bridge/sha256.js';
import { redactText, redactUrl, redactValue } from '../../../src/web/bridge/redact.js';
import { checkSchema } from '../../../src/web/bridge/json-schema.js';

describe('the bridge fallback crypto', () => {
  it('SHA-256 matches node:crypto for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(Buffer.from(sha256(bytes)).toString('hex')).toBe(
          createHash('sha256').update(bytes).digest('hex'),
        );
      }),
    );
  });

  it('HMAC-SHA256 matches node:crypto for any key and message', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 100 }),
        fc.uint8Array({ maxLength: 300 }),
        (key, msg) => {
          expect(Buffer.from(hmacSha256(key, msg)).toString('hex')).toBe(
            createHmac('sha256', key).update(msg).digest('hex'),
          );
        },
      ),
    );
  });
});

describe('the bridge redaction', () => {
  it('replaces secret-named keys at any depth', () => {
    expect(
      redactValue({
        user: 'ada',
        password: 'p',
        nested: { apiKey: 'k', list: [{ sessionId: 's' }] },
      }),
    ).toEqual({
      user: 'ada',
      password: '[REDACTED]',
      nested: { apiKey: '[REDACTED]', list: [{ sessionId: '[REDACTED]' }] },
    });
  });

  it('replaces the same names in URL query strings and credentials, keeping the rest', () => {
    const url = redactUrl(
      'https://u:pw@x.test/cb?access_token=abc&page=2&Authorization=z#id_token=q',
    );
    expect(url).not.toMatch(/abc|pw|=z|=q/);
    expect(url).toContain('page=2');
  });

  it('replaces bearer values and secret assignments in text', () => {
    expect(redactText('Authorization: Bearer abc.def')).not.toContain('abc.def');
    expect(redactText('login token=abc123 ok')).toBe('login token=[REDACTED] ok');
    expect(redactText('{"password":"hunter2"}')).not.toContain('hunter2');
  });
});

describe('action parameter checking', () => {
  const schema = {
    type: 'object',
    properties: { a: { type: 'number', minimum: 0 }, tag: { type: 'string', enum: ['x', 'y'] } },
    required: ['a'],
    additionalProperties: false,
  };
  it('accepts valid params and names the first problem otherwise', () => {
    expect(checkSchema(schema, { a: 1, tag: 'x' })).toBeNull();
    expect(checkSchema(schema, {})).toBe('params.a is required');
    expect(checkSchema(schema, { a: -1 })).toBe('params.a must be ≥ 0');
    expect(checkSchema(schema, { a: 1, tag: 'z' })).toContain('params.tag must be one of');
    expect(checkSchema(schema, { a: 1, extra: true })).toBe('params.extra is not allowed');
    expect(checkSchema(schema, { a: '1' })).toContain('params.a must be "number"');
  });
});
