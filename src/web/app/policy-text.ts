/**
 * How the owner's policy reads in the UI (spec/authority.md §3): a rule's
 * match fields in words, the rule that made a decision, the read-only
 * setting, and the REST bodies the Policy screen's forms send. Pure, so the
 * unit tests check it without a browser.
 */
import type { ListedRule, PolicyRule, ReadOnly } from '../../kernel/authority/policy.js';
import type { Approval } from '../../kernel/records.js';

export const MATCH_FIELDS = ['door', 'tool', 'agent', 'effect', 'target'] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

/** The fields of the rule form, as the inputs hold them. */
export type RuleFields = Record<MatchField | 'decision' | 'reason' | 'rate' | 'position', string>;

/** "door scene · effect destructive"; "every call" when the rule names no field (absent = any). */
export function matchText(rule: Partial<Pick<PolicyRule, MatchField>>): string {
  const parts = MATCH_FIELDS.flatMap((f) => (rule[f] ? [`${f} ${rule[f]}`] : []));
  return parts.length > 0 ? parts.join(' · ') : 'every call';
}

/** Whether a decision's rule names a rule, rather than read-only or a default. */
export const isRuleId = (rule: string | null | undefined): rule is string =>
  !!rule && rule !== 'readOnly' && !rule.startsWith('default:');

/** The rule that decided, in words: a listed rule by position, read-only, or a default. */
export function decidedBy(rule: string | null, rules: readonly ListedRule[] = []): string {
  if (rule === null) return 'no decision';
  if (rule === 'readOnly') return 'read-only';
  if (rule.startsWith('default:')) return `default for ${rule.slice('default:'.length)} calls`;
  const listed = rules.find((r) => r.id === rule);
  return listed ? `rule ${listed.position} (${rule})` : `rule ${rule}`;
}

/** Why the "what would happen" tester got its decision: "by rule 2 (r-1a2b): reason (a write call)". */
export function verdictWhy(
  verdict: { rule: string; reason: string | null; effect?: string },
  rules: readonly ListedRule[] = [],
): string {
  const why = verdict.reason ? `: ${verdict.reason}` : '';
  const effect = verdict.effect ? ` (a ${verdict.effect} call)` : '';
  return `by ${decidedBy(verdict.rule, rules)}${why}${effect}`;
}

/** The REST body of a rule form: empty fields left out (absent = any), `position` a number. */
export function ruleBody(fields: Partial<RuleFields>): Record<string, string | number> {
  const body: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(fields)) {
    const text = (value ?? '').trim();
    if (!text) continue;
    body[key] = key === 'position' ? Number(text) : text;
  }
  return body;
}

/** A rule's fields for the edit form (absent = empty). */
export function ruleFields(rule: PolicyRule): Partial<RuleFields> {
  const fields: Partial<RuleFields> = { decision: rule.decision };
  for (const key of [...MATCH_FIELDS, 'reason', 'rate'] as const) {
    const value = rule[key];
    if (value !== undefined) fields[key] = value;
  }
  return fields;
}

/** The `readOnly` to send: the whole workspace, these doors, or nothing. */
export function readOnlyValue(whole: boolean, doors: readonly string[]): ReadOnly {
  if (whole) return true;
  const list = [...new Set(doors.map((d) => d.trim()).filter(Boolean))];
  return list.length > 0 ? list : false;
}

/** The doors a `readOnly` names (none for true or false). */
export const readOnlyDoors = (readOnly: ReadOnly): string[] =>
  Array.isArray(readOnly) ? readOnly : [];

export function readOnlyText(readOnly: ReadOnly): string {
  if (readOnly === true) return 'the whole workspace';
  const doors = readOnlyDoors(readOnly);
  return doors.length > 0 ? doors.join(', ') : 'nothing';
}

/**
 * A grant's capability in words: a 15-minute approval of a policy ask
 * carries `policy:<rule>|<target>` (kernel/authority/asks.ts); consent grants keep
 * their capability.
 */
export function grantCapabilityText(capability: string): string {
  if (!capability.startsWith('policy:')) return capability;
  const [rule = '', target = '', subject = ''] = capability.slice('policy:'.length).split('|', 3);
  return `policy ask approved for 15 minutes (${decidedBy(rule)}${target ? `, target ${target}` : ''}${subject ? `, only ${decodeURIComponent(subject)}` : ''})`;
}

/**
 * What each approve button of a policy ask covers, in words. Once: this
 * exact call. 15 minutes: the grant kernel/authority/asks.ts makes, which lets through
 * every call of this agent that the same rule asks about with the same
 * target string (`askCapability`): for an upstream MCP tool the target is
 * `upstream:tool`, for a page action `origin:action`, for a call made of
 * parts the whole set; a tool with no target leaves every call the rule asks
 * about, whatever the tool.
 */
export function approvalScopes(
  a: Pick<Approval, 'agent' | 'target' | 'rule'> & Partial<Pick<Approval, 'preview'>>,
): {
  once: string;
  quarter: string;
  /** The 15-minute scope narrowed to the call's subject (kernel `preview.subject`), when the door named one. */
  narrow: string | null;
} {
  // The inbox gets approvals as `shown` (kernel/authority/consent.ts): `agent` is the agent's name.
  const who = a.agent ?? 'this agent';
  const target = a.target ?? '';
  const quarter =
    target === ''
      ? `Every call by ${who} that ${decidedBy(a.rule)} asks about (any tool) for 15 minutes`
      : target.includes(',')
        ? `Every call made of exactly ${target.split(',').join(', ')} by ${who} for 15 minutes`
        : `Every ${target} call by ${who} for 15 minutes`;
  const subject = (a.preview as { subject?: unknown } | null)?.subject;
  const narrow =
    typeof subject === 'string' && subject !== ''
      ? `Only ${target || 'calls'} on ${subject} by ${who} for 15 minutes`
      : null;
  return { once: 'Only this call', quarter, narrow };
}

/** A rule's `origin` in words: "made from the inbox (request 1a2b3c4d…)"; other text as written. */
export function originText(origin: string): string {
  if (!origin.startsWith('inbox:')) return origin;
  const id = origin.slice('inbox:'.length);
  return `made from the inbox (request ${id.length > 8 ? `${id.slice(0, 8)}…` : id})`;
}

const GLOB = /[*?]/;

/**
 * The rule "Always allow" / "Always deny" on a policy ask's card adds: this
 * agent, door (mount) and tool, and the target when the owner chose it (a
 * call made of parts has no single target to name). A sentence when no
 * exact rule can be made (a name holding a glob character would match more).
 */
export function alwaysRule(
  a: Pick<Approval, 'id' | 'agent' | 'door' | 'tool' | 'target'>,
  decision: 'allow' | 'deny',
  withTarget: boolean,
): Record<string, string> | string {
  const target = withTarget ? ruleTarget(a) : null;
  const named = [a.agent, a.tool, a.door, ...(target ? [target] : [])];
  if (!a.agent || !a.tool || named.some((v) => !v || GLOB.test(v)))
    return 'This call cannot be named exactly by a rule (no agent or tool, or a name holding * or ?): add one on the Policy screen instead.';
  return {
    decision,
    agent: a.agent,
    door: a.door,
    tool: a.tool,
    ...(target ? { target } : {}),
    origin: `inbox:${a.id}`,
  };
}

/** The target a rule can name for this ask: its one target string, none for a call made of parts. */
export function ruleTarget(a: Pick<Approval, 'target'>): string | null {
  return a.target && !a.target.includes(',') && !GLOB.test(a.target) ? a.target : null;
}

/** What "Always allow" / "Always deny" covers, in words. */
export function alwaysText(a: Pick<Approval, 'agent' | 'door' | 'tool'>): string {
  const who = a.agent ?? 'this agent';
  return `Every ${a.tool ?? ''} call on ${a.door} by ${who}, from now on (a rule you can remove)`;
}
