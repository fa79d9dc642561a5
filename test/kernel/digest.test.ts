import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson } from '../../src/kernel/digest.js';

/** The definition canonicalJson keeps: keys sorted into a copy, then JSON.stringify. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
const reference = (value: unknown) => JSON.stringify(sortKeys(value));

describe('canonicalJson', () => {
  it('canonical JSON is the sorted copy’s JSON.stringify for any value', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withObjectString: false }), (value) => {
        expect(canonicalJson(value)).toBe(reference(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('an own __proto__ key (as JSON.parse makes) stays out of the text, as it always did', () => {
    const value = JSON.parse('{"a":1,"__proto__":{"b":2},"c":{"__proto__":null}}') as unknown;
    expect(canonicalJson(value)).toBe(reference(value));
    expect(canonicalJson(value)).toBe('{"a":1,"c":{}}');
  });

  it('integer-like keys come first in ascending order, as in a JSON object', () => {
    const value = { b: 1, 10: 'x', 2: 'y', a: [undefined, () => 1], 4294967295: 'big', '01': 'z' };
    expect(canonicalJson(value)).toBe(reference(value));
    expect(canonicalJson(value)).toBe(
      '{"2":"y","10":"x","01":"z","4294967295":"big","a":[null,null],"b":1}',
    );
  });

  it('undefined, functions and symbols are left out of objects and null in arrays', () => {
    const value = {
      u: undefined,
      f: () => 1,
      s: Symbol('s'),
      list: [undefined, Symbol('t')],
      d: new Date(0),
    };
    expect(canonicalJson(value)).toBe(reference(value));
  });
});
