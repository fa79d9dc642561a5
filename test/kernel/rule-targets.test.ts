import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  checkRule,
  globsOverlap,
  readShorthand,
  type DoorTargets,
} from '../../src/kernel/authority/rule-targets.js';
import { globMatches } from '../../src/kernel/authority/policy.js';

const fs: DoorTargets = {
  name: 'mcp',
  mount: 'fs',
  targetForms: ['fs:<tool>'],
  tools: ['fs_read_text_file', 'fs_write_file'],
};
const page: DoorTargets = {
  name: 'page',
  mount: 'page',
  targetForms: ['<origin>:<action>'],
  tools: ['wu_execute_action'],
};
const plane: DoorTargets = {
  name: 'openapi',
  mount: 'plane',
  targetForms: ['plane:<resource>.<method>', '<METHOD> <path>'],
  tools: ['plane_call'],
};
const scene: DoorTargets = {
  name: 'scene',
  mount: 'scene',
  targetForms: ['add_page', 'remove_page', 'pipeline:<step>', 'export:<format>'],
  tools: ['koharu.apply'],
};
const doors = [fs, page, plane, scene];

describe('globsOverlap: two globs match a common string', () => {
  it.each([
    ['fs:*', 'fs:write_file', true],
    ['fs:*', 'write_file', false],
    ['*:submit', 'http://x:3000:*', true],
    ['pipeline:*', 'pipeline:fill', true],
    ['remove_*', 'add_page', false],
    ['a?c', 'a*', true],
    ['*x', '*y', false],
    ['*', '', true],
  ])('%s and %s: %s', (a, b, overlap) => {
    expect(globsOverlap(a, b)).toBe(overlap);
    expect(globsOverlap(b, a)).toBe(overlap);
  });

  it('whenever a string matches both globs, they overlap', () => {
    const glob = fc.stringMatching(/^[ab:*?]{0,6}$/);
    fc.assert(
      fc.property(glob, glob, fc.stringMatching(/^[ab:]{0,6}$/), (a, b, s) => {
        if (globMatches(a, s) && globMatches(b, s)) expect(globsOverlap(a, b)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('checkRule: a rule that can never match is refused with the forms', () => {
  it('names the door’s target forms and the prefixed target meant', () => {
    const r = checkRule({ door: 'fs', target: 'write_file', decision: 'deny' }, doors);
    expect(r).toMatchObject({ ok: false, code: 'malformedRequest' });
    expect('message' in r && r.message).toContain(
      'Target `write_file` cannot match any call of fs (mcp); the targets there look like fs (mcp): `fs:<tool>`. Did you mean target `fs:write_file`?',
    );
  });

  it('accepts rules that can match, and rules for doors not mounted here', () => {
    for (const rule of [
      { door: 'mcp', target: 'fs:write_*' },
      { door: 'page', target: '*:submit_order' },
      { door: 'openapi', target: 'DELETE /pets/*' },
      { door: 'scene', target: 'pipeline:fill' },
      { target: 'remove_page' },
      { door: 'notes', target: 'write:Work' },
      { door: 'scene', target: '*' },
    ])
      expect(checkRule({ ...rule, decision: 'deny' }, doors)).toEqual({ warning: null });
  });

  it('with force, keeps the rule with a warning', () => {
    expect(
      checkRule({ door: 'scene', target: 'remove_pages', decision: 'deny' }, doors, true),
    ).toEqual({ warning: expect.stringMatching(/never matches as written/) });
  });
});

describe('readShorthand: DOOR:TARGET as a person means it', () => {
  it('an upstream name with its tool is door mcp, target upstream:tool', () => {
    expect(readShorthand('fs:write_file', doors)).toEqual({ door: 'mcp', target: 'fs:write_file' });
  });
  it('an openapi prefix with resource.method is door openapi, the whole target', () => {
    expect(readShorthand('plane:pets.delete', doors)).toEqual({
      door: 'openapi',
      target: 'plane:pets.delete',
    });
  });
  it('page:ORIGIN:ACTION keeps its documented reading', () => {
    expect(readShorthand('page:*:submit_order', doors)).toEqual({
      door: 'page',
      target: '*:submit_order',
    });
  });
  it('a door without a target stays a door', () => {
    expect(readShorthand('scene', doors)).toEqual({ door: 'scene' });
  });
});
