/**
 * How the owner's policy and a policy ask's preview read in the web UI
 * (src/web/app/policy-text.ts, src/web/app/preview.ts): pure helpers, no
 * browser.
 */
import { describe, expect, it } from 'vitest';
import type { ListedRule } from '../../src/kernel/authority/policy.js';
import {
  alwaysRule,
  alwaysText,
  approvalScopes,
  originText,
  decidedBy,
  grantCapabilityText,
  isRuleId,
  matchText,
  readOnlyText,
  readOnlyValue,
  ruleBody,
  ruleFields,
  verdictWhy,
} from '../../src/web/app/policy-text.js';
import { detailLabel, readablePreview } from '../../src/web/app/preview.js';

const rule: ListedRule = {
  id: 'r-1a2b3c4d',
  source: 'owner',
  position: 2,
  door: 'scene',
  effect: 'destructive',
  target: 'export:*',
  decision: 'ask',
  rate: '10/minute',
};

describe('a rule in words', () => {
  it('lists the match fields a rule names, in the order door, tool, agent, effect, target', () => {
    expect(matchText({ target: 'a:*', tool: 'plane_call', door: 'openapi' })).toBe(
      'door openapi · tool plane_call · target a:*',
    );
  });

  it('reads a rule that names no match field as matching every call', () => {
    expect(matchText({})).toBe('every call');
  });
});

describe('the rule that decided', () => {
  it('names a listed rule by its position and id', () => {
    expect(decidedBy('r-1a2b3c4d', [rule])).toBe('rule 2 (r-1a2b3c4d)');
    expect(decidedBy('r-gone', [rule])).toBe('rule r-gone');
  });

  it('names read-only and the defaults in words, and tells them from rule ids', () => {
    expect(decidedBy('readOnly')).toBe('read-only');
    expect(decidedBy('default:destructive')).toBe('default for destructive calls');
    expect(decidedBy(null)).toBe('no decision');
    expect([
      isRuleId('r-1'),
      isRuleId('readOnly'),
      isRuleId('default:read'),
      isRuleId(null),
    ]).toEqual([true, false, false, false]);
  });

  it("says why the tester's call got its decision, with the reason and the effect", () => {
    expect(
      verdictWhy({ rule: 'r-1a2b3c4d', reason: 'exports wait', effect: 'write' }, [rule]),
    ).toBe('by rule 2 (r-1a2b3c4d): exports wait (a write call)');
    expect(verdictWhy({ rule: 'default:read', reason: null })).toBe('by default for read calls');
  });
});

describe('the rule form', () => {
  it('sends only the fields filled in, trimmed, with the position as a number', () => {
    expect(
      ruleBody({
        decision: 'deny',
        door: ' scene ',
        tool: '',
        agent: '  ',
        reason: 'no exports',
        position: '3',
      }),
    ).toEqual({ decision: 'deny', door: 'scene', reason: 'no exports', position: 3 });
  });

  it("fills the edit form from a rule's own fields, leaving out its id, source and position", () => {
    expect(ruleFields(rule)).toEqual({
      decision: 'ask',
      door: 'scene',
      effect: 'destructive',
      target: 'export:*',
      rate: '10/minute',
    });
  });
});

describe('read-only', () => {
  it('sends true for the whole workspace, the doors named (deduplicated), or false for none', () => {
    expect(readOnlyValue(true, ['scene'])).toBe(true);
    expect(readOnlyValue(false, ['scene', ' plane ', '', 'scene'])).toEqual(['scene', 'plane']);
    expect(readOnlyValue(false, [' '])).toBe(false);
  });

  it('reads the setting in force in words', () => {
    expect(readOnlyText(true)).toBe('the whole workspace');
    expect(readOnlyText(['scene', 'notes'])).toBe('scene, notes');
    expect(readOnlyText(false)).toBe('nothing');
    expect(readOnlyText([])).toBe('nothing');
  });
});

describe('grants', () => {
  it("reads a 15-minute approval's grant as the rule and target it covers", () => {
    expect(grantCapabilityText('policy:r-1a2b3c4d|plane:pets.delete')).toBe(
      'policy ask approved for 15 minutes (rule r-1a2b3c4d, target plane:pets.delete)',
    );
    expect(grantCapabilityText('policy:default:destructive|')).toBe(
      'policy ask approved for 15 minutes (default for destructive calls)',
    );
    expect(grantCapabilityText('write')).toBe('write');
  });
});

describe('a policy ask preview', () => {
  it('puts the summary first, then what runs, then the request, then what else the door added', () => {
    const { summary, details } = readablePreview(
      {
        extra: 1,
        body: { name: 'Rex' },
        summary: 'DELETE https://api.example/pets/7',
        url: 'https://api.example/pets/7',
        method: 'DELETE',
        tool: 'plane_call',
        targets: ['plane:pets.delete', 'DELETE /pets/{petId}'],
      },
      'fallback',
    );
    expect(summary).toBe('DELETE https://api.example/pets/7');
    expect(details.map((d) => d.key)).toEqual([
      'tool',
      'targets',
      'method',
      'url',
      'body',
      'extra',
    ]);
  });

  it('shows scalars and lists of scalars as text, objects and multi-line text as blocks', () => {
    const { details } = readablePreview(
      {
        summary: 's',
        targets: ['a', 'b'],
        effect: 'write',
        arguments: { text: 'hi' },
        note: 'line 1\nline 2',
        empty: [],
        missing: null,
      },
      'fallback',
    );
    expect(details).toEqual([
      { key: 'effect', label: 'Effect', text: 'write', block: false },
      { key: 'targets', label: 'Targets', text: 'a, b', block: false },
      { key: 'arguments', label: 'Arguments', text: '{\n  "text": "hi"\n}', block: true },
      { key: 'note', label: 'Note', text: 'line 1\nline 2', block: true },
      { key: 'empty', label: 'Empty', text: '—', block: false },
      { key: 'missing', label: 'Missing', text: '—', block: false },
    ]);
  });

  it('falls back to the approval summary when the preview has none or is not an object', () => {
    expect(readablePreview(null, 'alice: echo')).toEqual({ summary: 'alice: echo', details: [] });
    expect(readablePreview({ summary: '' }, 'alice: echo').summary).toBe('alice: echo');
    expect(readablePreview('raw', 'alice: echo').details).toEqual([
      { key: 'preview', label: 'Preview', text: 'raw', block: false },
    ]);
  });

  it('labels details in words: camelCase and snake_case split, URL spelled out', () => {
    expect([detailLabel('pageUrl'), detailLabel('target_element'), detailLabel('url')]).toEqual([
      'Page url',
      'Target element',
      'URL',
    ]);
  });
});

describe('approve buttons in words', () => {
  it('says the 15-minute approval covers every call of the target by the agent, as the grant matches', () => {
    expect(approvalScopes({ agent: 'default', target: 'fs:edit_file', rule: 'r-1' })).toEqual({
      once: 'Only this call',
      quarter: 'Every fs:edit_file call by default for 15 minutes',
      narrow: null,
    });
  });

  it('offers the 15 minutes narrowed to the subject the door named, saying exactly what it covers', () => {
    const a = { agent: 'default', target: 'fs:edit_file', rule: 'r-1' };
    expect(approvalScopes({ ...a, preview: { summary: 's', subject: 'file /a.txt' } }).narrow).toBe(
      'Only fs:edit_file on file /a.txt by default for 15 minutes',
    );
    expect(grantCapabilityText('policy:r-1|fs:edit_file|file%20%2Fa.txt')).toBe(
      'policy ask approved for 15 minutes (rule r-1, target fs:edit_file, only file /a.txt)',
    );
  });

  it('says a call made of parts is covered only with exactly that set', () => {
    expect(
      approvalScopes({ agent: 'alice', target: 'removeNode,removePage', rule: 'r-1' }).quarter,
    ).toBe('Every call made of exactly removeNode, removePage by alice for 15 minutes');
  });

  it('says a call with no target leaves every call the rule asks about, whatever the tool', () => {
    expect(approvalScopes({ agent: 'bob', target: null, rule: 'r-7' }).quarter).toBe(
      'Every call by bob that rule r-7 asks about (any tool) for 15 minutes',
    );
  });
});

describe('decisions that become rules', () => {
  const ask = {
    id: '3f9a1c2e-0000-4000-8000-000000000000',
    agent: 'alice',
    door: 'mcp',
    tool: 'fs_edit_file',
    target: 'fs:edit_file',
  };

  it('makes a rule for the agent, door and tool, with the target only when chosen, and says where it came from', () => {
    expect(alwaysRule(ask, 'allow', false)).toEqual({
      decision: 'allow',
      agent: 'alice',
      door: 'mcp',
      tool: 'fs_edit_file',
      origin: `inbox:${ask.id}`,
    });
    expect(alwaysRule(ask, 'deny', true)).toMatchObject({
      decision: 'deny',
      target: 'fs:edit_file',
    });
    expect(originText(`inbox:${ask.id}`)).toBe('made from the inbox (request 3f9a1c2e…)');
    expect(alwaysText(ask)).toBe(
      'Every fs_edit_file call on mcp by alice, from now on (a rule you can remove)',
    );
  });

  it('names no target for a call made of parts, and makes no rule a glob character would widen', () => {
    expect(
      alwaysRule({ ...ask, target: 'removeNode,removePage' }, 'allow', true),
    ).not.toHaveProperty('target');
    expect(typeof alwaysRule({ ...ask, agent: 'a*' }, 'allow', false)).toBe('string');
    expect(typeof alwaysRule({ ...ask, agent: null }, 'allow', false)).toBe('string');
  });
});
