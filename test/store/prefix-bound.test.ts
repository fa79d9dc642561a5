import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prefixBound } from '../../src/store/sql/record-repo.js';

/** Byte order of UTF-8, the order of record keys in both stores. */
const compare = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
const text = fc.string({ unit: 'grapheme', maxLength: 6 });
const edgy = fc
  .array(fc.constantFrom('a', '\uD7FF', '\uE000', '\uFFFF', '\u{10000}', '\u{10FFFF}'), {
    maxLength: 4,
  })
  .map((parts) => parts.join(''));

describe('prefixBound', () => {
  it('a key lies in [prefix, bound) exactly when it starts with the prefix', () => {
    fc.assert(
      fc.property(fc.oneof(text, edgy), fc.oneof(text, edgy), (prefix, key) => {
        const bound = prefixBound(prefix);
        const inRange =
          compare(key, prefix) >= 0 && (bound === undefined || compare(key, bound) < 0);
        expect(inRange).toBe(key.startsWith(prefix));
      }),
    );
  });

  it('a prefix of only the highest code point has no bound', () => {
    expect(prefixBound('\u{10FFFF}\u{10FFFF}')).toBeUndefined();
  });
});
