/**
 * A clean inbox (src/web/app/inbox-groups.ts): identical pending requests of
 * one agent collapse into one card with a count, and each card says how long
 * ago it was asked. Pure helpers, no browser.
 */
import { describe, expect, it } from 'vitest';
import type { Approval } from '../../src/kernel/records.js';
import { askedText, groupApprovals } from '../../src/web/app/inbox-groups.js';

const ask = (over: Partial<Approval>): Approval =>
  ({
    id: 'a',
    kind: 'policy',
    connection: 'agent:alice/session:1a2b3c4d',
    agent: 'alice',
    door: 'mcp',
    capability: 'policy',
    tool: 'fs_edit_file',
    digest: 'd1',
    target: 'fs:edit_file',
    rule: 'r-1',
    preview: null,
    scope: null,
    reason: null,
    usedAt: null,
    summary: 'fs: edit_file',
    status: 'pending',
    lifetimeMs: 900_000,
    createdAt: 1000,
    decidedAt: null,
    resource: null,
    grantId: null,
    orphanedAt: null,
    ...over,
  }) as Approval;

describe('inbox groups', () => {
  it('collapses the same agent, door, tool and argument digest into one group, newest shown, oldest first', () => {
    const groups = groupApprovals([
      ask({ id: 'p2', createdAt: 2000, connection: 'agent:alice/session:2' }),
      ask({ id: 'p1', createdAt: 1000 }),
      ask({ id: 'p3', createdAt: 3000, connection: 'agent:alice/session:3' }),
    ]);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ ids: ['p1', 'p2', 'p3'], firstAt: 1000 });
    expect(groups[0]!.latest.id).toBe('p3');
  });

  it('keeps asks apart that differ in agent, door, tool or arguments', () => {
    const groups = groupApprovals([
      ask({ id: '1' }),
      ask({ id: '2', agent: 'bob' }),
      ask({ id: '3', door: 'page' }),
      ask({ id: '4', tool: 'fs_write_file' }),
      ask({ id: '5', digest: 'd2' }),
    ]);
    expect(groups.map((g) => g.ids)).toEqual([['1'], ['2'], ['3'], ['4'], ['5']]);
  });

  it('collapses consent requests of the same agent, door and capability from different sessions', () => {
    const consent = (id: string, capability: string, connection: string) =>
      ask({ id, kind: 'consent', capability, tool: null, digest: null, connection });
    const groups = groupApprovals([
      consent('c1', 'write', 'agent:alice/session:1'),
      consent('c2', 'write', 'agent:alice/session:2'),
      consent('c3', 'read', 'agent:alice/session:3'),
    ]);
    expect(groups.map((g) => g.ids)).toEqual([['c1', 'c2'], ['c3']]);
  });

  it('never collapses requests of no agent', () => {
    expect(
      groupApprovals([ask({ id: '1', agent: null }), ask({ id: '2', agent: null })]),
    ).toHaveLength(2);
  });

  it('says how long ago a card was asked, and how often', () => {
    expect(askedText(0, 1, 30_000)).toBe('asked just now');
    expect(askedText(0, 1, 4 * 60_000 + 5_000)).toBe('asked 4 min ago');
    expect(askedText(0, 3, 125 * 60_000)).toBe('asked 3 times, first 2 h 05 min ago');
  });
});
