import { describe, expect, it } from 'vitest';
import { isObject } from '../../src/kernel/objects.js';

describe('isObject', () => {
  it('is true for plain objects, including empty and prototype-less ones', () => {
    expect([{}, { a: 1 }, Object.create(null)].map(isObject)).toEqual([true, true, true]);
  });

  it('is false for null, arrays and every non-object', () => {
    expect([null, undefined, [], [1], 'x', 1, true, () => ({})].map(isObject)).toEqual(
      Array(8).fill(false),
    );
  });
});
