/** The JSON nesting cap (authority.md §4): 64 levels, judged without recursion. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MAX_JSON_DEPTH,
  nestsDeeperThan,
  textNestsDeeperThan,
} from '../../src/kernel/calls/json-depth.js';

/** `levels` arrays inside each other around `leaf`. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

/** The real depth, recursively, for values small enough to recurse over. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('JSON nesting cap', () => {
  it('accepts exactly 64 levels and refuses 65, as a value and as JSON text', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(nestsDeeperThan(nested(64))).toBe(false);
    expect(nestsDeeperThan(nested(65))).toBe(true);
    expect(textNestsDeeperThan(JSON.stringify(nested(64)))).toBe(false);
    expect(textNestsDeeperThan(JSON.stringify(nested(65)))).toBe(true);
  });

  it('judges a value 200,000 levels deep without overflowing the stack', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(nestsDeeperThan(deep)).toBe(true);
    expect(textNestsDeeperThan('['.repeat(200_000) + ']'.repeat(200_000))).toBe(true);
  });

  it('does not count brackets inside JSON strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: '[[[[{{{{"\\'.repeat(50) });
    expect(textNestsDeeperThan(text, 1)).toBe(false);
    expect(textNestsDeeperThan(JSON.stringify([{ s: '"]]]]' }]), 1)).toBe(true);
  });

  it('counts a cyclic value as too deep instead of walking it forever', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(nestsDeeperThan(cycle)).toBe(true);
  });

  it('scalars, strings and byte arrays add no level', () => {
    expect(nestsDeeperThan('[[[[', 0)).toBe(false);
    expect(nestsDeeperThan(new Uint8Array(10), 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
  });

  it('the text scan and the value walk agree with the real depth of any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, max) => {
        const deeper = depthOf(value) > max;
        expect(nestsDeeperThan(value, max)).toBe(deeper);
        expect(textNestsDeeperThan(JSON.stringify(value), max)).toBe(deeper);
      }),
    );
  });
});
