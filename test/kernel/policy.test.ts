/** The policy's evaluation and its store (authority.md §3), without HTTP. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  evaluate,
  globMatches,
  PolicyConfigSchema,
  type ListedRule,
  type PolicyCall,
} from '../../src/kernel/authority/policy.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';

const call = (over: Partial<PolicyCall> = {}): PolicyCall => ({
  door: 'openapi',
  mount: 'plane',
  tool: 'plane_call',
  agent: 'alice',
  effect: 'write',
  targets: ['plane:pets.update', 'PATCH /pets/{id}'],
  ...over,
});
const rule = (r: Omit<ListedRule, 'id' | 'source' | 'position'>, id = 'r'): ListedRule => ({
  id,
  source: 'owner',
  position: 1,
  ...r,
});

describe('globs', () => {
  it('* spans any characters, colons and slashes included; ? is one; the rest is literal', () => {
    expect(globMatches('page:*:submit_order', 'page:http://127.0.0.1:5173:submit_order')).toBe(
      true,
    );
    expect(globMatches('plane:pets.*', 'plane:pets.delete')).toBe(true);
    expect(globMatches('plane:pets.*', 'plane:petsXdelete')).toBe(false);
    expect(globMatches('DELETE /pets/{id}', 'DELETE /pets/{id}')).toBe(true);
    expect(globMatches('a?c', 'abc')).toBe(true);
    expect(globMatches('a?c', 'ac')).toBe(false);
    expect(globMatches('(x|y)+', 'x')).toBe(false);
  });
});

describe('evaluation', () => {
  it('without rules the defaults decide: read and write allow, destructive asks', () => {
    expect(evaluate([], false, call({ effect: 'read' }))).toMatchObject({
      decision: 'allow',
      rule: 'default:read',
    });
    expect(evaluate([], false, call({ effect: 'write' })).decision).toBe('allow');
    expect(evaluate([], false, call({ effect: 'destructive' }))).toMatchObject({
      decision: 'ask',
      rule: 'default:destructive',
    });
  });

  it('the first matching rule wins; any target of the call may match', () => {
    const rules = [
      rule({ target: 'PATCH /pets/*', decision: 'deny', reason: 'no patching' }, 'first'),
      rule({ door: 'plane', decision: 'allow' }, 'second'),
    ];
    expect(evaluate(rules, false, call())).toMatchObject({
      decision: 'deny',
      rule: 'first',
      reason: 'no patching',
    });
    expect(evaluate(rules, false, call({ targets: ['plane:pets.list'] })).rule).toBe('second');
  });

  it('a rule matches door by name or mount, and every field it sets must hold', () => {
    expect(evaluate([rule({ door: 'plane', decision: 'deny' })], false, call()).decision).toBe(
      'deny',
    );
    const narrow = rule({ door: 'openapi', agent: 'bob', effect: 'write', decision: 'deny' });
    expect(evaluate([narrow], false, call()).rule).toBe('default:write');
    expect(evaluate([narrow], false, call({ agent: 'bob' })).rule).toBe('r');
    expect(evaluate([narrow], false, call({ agent: 'bob', effect: 'read' })).rule).toBe(
      'default:read',
    );
  });

  it("rules naming an agent never match the owner's own calls", () => {
    const rules = [rule({ agent: '*', decision: 'deny' })];
    expect(evaluate(rules, false, call({ agent: null })).rule).toBe('default:write');
  });

  it('read-only denies writes and destructive calls of the listed doors, never reads', () => {
    for (const readOnly of [true, ['openapi'], ['plane']] as const) {
      const allowAll = [rule({ decision: 'allow' })];
      expect(evaluate(allowAll, [...(Array.isArray(readOnly) ? readOnly : [])], call()).rule).toBe(
        readOnly === true ? 'r' : 'readOnly',
      );
      expect(evaluate(allowAll, readOnly === true ? true : [...readOnly], call())).toMatchObject({
        decision: 'deny',
        rule: 'readOnly',
      });
      expect(
        evaluate(allowAll, readOnly === true ? true : [...readOnly], call({ effect: 'read' }))
          .decision,
      ).toBe('allow');
    }
    expect(evaluate([], ['scene'], call()).decision).toBe('allow');
  });

  it('a target glob on a call with no targets matches only what matches the empty string', () => {
    expect(
      evaluate([rule({ target: '*', decision: 'deny' })], false, call({ targets: [] })).rule,
    ).toBe('r');
    expect(
      evaluate([rule({ target: 'x*', decision: 'deny' })], false, call({ targets: [] })).rule,
    ).toBe('default:write');
  });
});

describe('the config section', () => {
  it('is checked strictly, naming what is wrong', () => {
    const bad = PolicyConfigSchema.safeParse({
      rules: [{ decision: 'deny', rate: '10 per minute' }],
    });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toMatch(/N\/minute/);
    expect(
      PolicyConfigSchema.safeParse({ rules: [{ decision: 'allow', door: 'x', extra: 1 }] }).success,
    ).toBe(false);
    expect(PolicyConfigSchema.safeParse({ readOnly: ['scene'], rules: [] }).success).toBe(true);
  });
});

describe('the store', () => {
  let tk: TestKernel | undefined;
  afterEach(async () => {
    await tk?.dispose();
    tk = undefined;
  });

  it("the config file's rules come first and cannot be edited; the owner's persist across restarts", async () => {
    const config = { rules: [{ door: 'scene', decision: 'deny' as const, reason: 'frozen' }] };
    tk = await testKernel([], { policy: config });
    const { policy } = tk.kernel;
    const added = await policy.add({ tool: 'x_*', decision: 'ask' });
    expect(added).toMatchObject({ source: 'owner', position: 2 });
    const atTop = await policy.add({ tool: 'y', decision: 'allow' }, 1);
    expect(atTop).toMatchObject({ code: 'malformedRequest' });
    expect(await policy.remove('config-1')).toMatchObject({ code: 'malformedRequest' });
    await policy.setReadOnly(['notes']);
    await tk.close();

    tk = await testKernel([], { policy: config, dir: tk.dir });
    const view = await tk.kernel.policy.view();
    expect(view.rules.map((r) => [r.id, r.source, r.position])).toEqual([
      ['config-1', 'config', 1],
      [(added as ListedRule).id, 'owner', 2],
    ]);
    expect(view.readOnly).toEqual(['notes']);
  });

  it('an edit applies at once: the next decision sees it', async () => {
    tk = await testKernel([]);
    const { policy } = tk.kernel;
    expect((await policy.decide(call())).decision).toBe('allow');
    const added = (await policy.add({ door: 'plane', decision: 'deny' })) as ListedRule;
    expect((await policy.decide(call())).rule).toBe(added.id);
    await policy.remove(added.id);
    expect((await policy.decide(call())).rule).toBe('default:write');
  });

  it('a rate counts calls per rule and agent in a sliding window', async () => {
    let clock = 1_000_000;
    tk = await testKernel([], {
      now: () => clock,
      policy: { rules: [{ decision: 'allow', rate: '2/second' }] },
    });
    const { policy } = tk.kernel;
    const verdict = await policy.decide(call());
    expect(await policy.admit(verdict, 'alice')).toBeNull();
    expect(await policy.admit(verdict, 'alice')).toBeNull();
    const third = await policy.admit(verdict, 'alice');
    expect(third).toMatchObject({ code: 'busy', data: { retryAfterMs: 1000 } });
    expect(await policy.admit(verdict, 'bob')).toBeNull();
    clock += 600;
    expect(await policy.admit(verdict, 'alice')).toMatchObject({ data: { retryAfterMs: 400 } });
    clock += 400;
    expect(await policy.admit(verdict, 'alice')).toBeNull();
  });
});
