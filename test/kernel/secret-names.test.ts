import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { isSecretName, SECRET_WORDS_PATTERN } from '../../src/kernel/audit/secret-names.js';

const source = (path: string) =>
  readFileSync(new URL(`../../src/${path}`, import.meta.url), 'utf8');

describe('the secret-name rule', () => {
  it("the page bridge's copy is byte-for-byte the kernel's", () => {
    expect(source('web/bridge/secret-names.ts')).toBe(source('kernel/audit/secret-names.ts'));
  });

  it('counts a name secret when it contains a secret word, whatever the case and separators', () => {
    const names = [
      'password',
      'PASSWD',
      'x-api-key',
      'API_KEY',
      'apiKey',
      'pass_word',
      'sessionId',
    ];
    expect(names.filter(isSecretName)).toEqual(names);
  });

  it('leaves other names alone', () => {
    expect(['user', 'page', 'passport', 'apiVersion', 'keyboard'].filter(isSecretName)).toEqual([]);
  });

  it('finds api_key in text spelled apikey, api_key or api-key', () => {
    const re = new RegExp(SECRET_WORDS_PATTERN, 'i');
    expect(['apikey=1', 'API_KEY=1', 'api-key=1', 'pass=1'].map((t) => re.test(t))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });
});
