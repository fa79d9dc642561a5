/**
 * The one rule for which names hold secrets, used by the kernel (audit
 * digests, logs) and by the page bridge (events, console, network, store)
 * alike (spec/page.md "Redaction", spec/kernel.md §10). A name is secret when
 * it contains one of the words below, case-insensitively, with `-` and `_`
 * read alike and also ignored (`api-key`, `API_KEY`, `apiKey`, `pass_word`).
 *
 * This file imports nothing, so the browser can load it as it is. Its home is
 * src/kernel/audit/secret-names.ts; src/web/bridge/secret-names.ts is a
 * byte-for-byte copy because the bridge is served as sibling modules only
 * (`/bridge/<name>.js`). test/kernel/secret-names.test.ts fails when the two
 * differ.
 */

export const SECRET_WORDS = [
  'password',
  'passwd',
  'token',
  'secret',
  'apikey',
  'api_key',
  'authorization',
  'cookie',
  'session',
  'credential',
  'csrf',
  'xsrf',
] as const;

/** What stands where a secret was. */
export const REDACTED = '[REDACTED]';

export function isSecretName(name: string): boolean {
  const k = name.toLowerCase().replace(/-/g, '_');
  return SECRET_WORDS.some((w) => k.includes(w) || k.replace(/_/g, '').includes(w));
}

/**
 * The words as a regular expression source for finding them in free text,
 * where `api_key` also matches `apikey` and `api-key`.
 */
export const SECRET_WORDS_PATTERN = SECRET_WORDS.map((w) => w.replace(/_/g, '[-_]?')).join('|');
