/**
 * The owner's policy (spec/authority.md §3): rules that decide every tool
 * call of every door — `allow`, `ask` or `deny` — after validation and before
 * limits.
 *
 * A rule matches on door, tool, agent, effect and the door's target strings
 * (globs: `*` any run of characters, `?` one character). The first matching
 * rule wins; then the defaults read → allow, write → allow, destructive →
 * ask. `readOnly` (the whole workspace, or a list of doors) denies every
 * `write` and `destructive` call before any rule is read.
 *
 * Rules come from two places, evaluated in this order: the config file's
 * `policy` section (fixed while the server runs; edit the file) and the
 * store (edited by the owner through the web UI, the CLI and the owner REST
 * routes). Edits publish `policyChanged`, so every instance on the bus
 * reloads at once. Without a bus, a store with a change mark (SQLite) shows
 * another process's edit on the next call; one without (PostgreSQL) within
 * the 1-second cache.
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { failure, type Failure } from '../errors.js';
import type { EventBus } from '../events/events.js';
import { ONE_STATEMENT, type Store, type TransactionOptions } from '../store.js';
import type { Effect } from '../tool.js';

export const DECISIONS = ['allow', 'ask', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];
export const EFFECTS = ['read', 'write', 'destructive'] as const;

const RATE = /^([1-9][0-9]{0,4})\/(second|minute|hour)$/;
const WINDOW_MS = { second: 1000, minute: 60_000, hour: 3_600_000 } as const;

const glob = (field: string) =>
  z
    .string()
    .min(1, `\`${field}\` must not be empty; leave it out to match any ${field}`)
    .max(500, `\`${field}\` is longer than 500 characters`);

/** One rule as the owner writes it (config file, REST, CLI). */
export const PolicyRuleSchema = z
  .object({
    door: glob('door').optional(),
    tool: glob('tool').optional(),
    agent: glob('agent').optional(),
    effect: z.enum(EFFECTS).optional(),
    target: glob('target').optional(),
    decision: z.enum(DECISIONS),
    reason: z.string().max(500, '`reason` is longer than 500 characters').optional(),
    rate: z
      .string()
      .regex(
        RATE,
        '`rate` is N/second, N/minute or N/hour with N from 1 to 99999, e.g. "10/minute"',
      )
      .optional(),
    /**
     * Where the rule came from, shown on the Policy screen: `inbox:<approval
     * id>` for "Always allow" / "Always deny" on an inbox card; any other text
     * is shown as written. It never changes what the rule matches.
     */
    origin: z.string().min(1).max(200, '`origin` is longer than 200 characters').optional(),
    /**
     * An `ask` rule's asks pass the owner's quiet hours (push and email go out
     * at once, authority.md §6.3). Only on `decision: "ask"`.
     */
    urgent: z.boolean().optional(),
  })
  .strict();
export type PolicyRule = z.infer<typeof PolicyRuleSchema>;

/** `urgent` means something on an `ask` rule only: elsewhere it is refused. */
export const urgentOnAsk = (rule: { decision: Decision; urgent?: boolean | undefined }) =>
  rule.urgent !== true || rule.decision === 'ask';
export const URGENT_ON_ASK = {
  message: '`urgent` is for `decision: "ask"` rules only (their asks pass quiet hours)',
  path: ['urgent'],
};

/** `readOnly`: true for the whole workspace, or the doors (names or mounts) that are read-only. */
export const ReadOnlySchema = z.union([z.boolean(), z.array(z.string().min(1)).max(100)]);
export type ReadOnly = z.infer<typeof ReadOnlySchema>;

/** The config file's `policy` section. */
export const PolicyConfigSchema = z
  .object({
    readOnly: ReadOnlySchema.optional(),
    rules: z.array(PolicyRuleSchema.refine(urgentOnAsk, URGENT_ON_ASK)).max(1000).optional(),
  })
  .strict();
export type PolicyConfig = z.infer<typeof PolicyConfigSchema>;

/** A rule as listed: where it comes from, its id and its place in the evaluation order (1-based). */
export interface ListedRule extends PolicyRule {
  id: string;
  source: 'config' | 'owner';
  position: number;
}

export interface PolicyView {
  /** In force: the config file's and the owner's, combined. */
  readOnly: ReadOnly;
  readOnlyFromConfig: ReadOnly;
  readOnlyFromOwner: ReadOnly;
  rules: ListedRule[];
  defaults: Record<Effect, Decision>;
}

/** One call as the policy sees it. */
export interface PolicyCall {
  /** The door's name (`openapi`) and its mount (`plane`); a rule's `door` may name either. */
  door: string;
  mount: string;
  tool: string;
  /** Null for the owner's own calls and internal ones: rules naming an agent do not match them. */
  agent: string | null;
  effect: Effect;
  /** The door's target strings for this call (authority.md §3); empty when it has none. */
  targets: readonly string[];
}

export interface PolicyVerdict {
  decision: Decision;
  /** The rule that decided: a rule id, `readOnly`, or `default:<effect>`. */
  rule: string;
  /** The rule as listed, when a rule (not a default) decided. */
  matched: ListedRule | null;
  reason: string | null;
}

export const DEFAULT_DECISIONS: Record<Effect, Decision> = {
  read: 'allow',
  write: 'allow',
  destructive: 'ask',
};

/** A default's verdict is the same every call: built once (frozen, shared). */
const DEFAULT_VERDICTS: Record<Effect, PolicyVerdict> = Object.fromEntries(
  EFFECTS.map((effect) => [
    effect,
    Object.freeze({
      decision: DEFAULT_DECISIONS[effect],
      rule: `default:${effect}`,
      matched: null,
      reason: null,
    }),
  ]),
) as Record<Effect, PolicyVerdict>;

export interface Policy {
  decide(call: PolicyCall): Promise<PolicyVerdict>;
  /**
   * Counts a call against its rule's rate for this agent (its key): null
   * when within it, else `busy` with `retryAfterMs`. Counted in the store,
   * so every instance on it shares one count.
   */
  admit(verdict: PolicyVerdict, agent: string | null): Promise<Failure | null>;
  view(): Promise<PolicyView>;
  /**
   * Adds an owner rule at `position` (1-based among all rules; default last).
   * A rule that can never match a mounted door's calls is refused, or with
   * `force` kept and answered with a `warning`.
   */
  add(rule: PolicyRule, position?: number, options?: EditOptions): Promise<CheckedRule | Failure>;
  update(id: string, rule: PolicyRule, options?: EditOptions): Promise<CheckedRule | Failure>;
  remove(id: string): Promise<ListedRule | Failure>;
  move(id: string, position: number): Promise<ListedRule | Failure>;
  setReadOnly(readOnly: ReadOnly): Promise<void>;
}

export interface EditOptions {
  /** Keep a rule that can never match, with a warning (`--force`). */
  force?: boolean | undefined;
}

/** A rule as added or changed: listed, with a warning when it was kept by force. */
export type CheckedRule = ListedRule & { warning?: string };

/** Whether a rule can match the mounted doors' calls (rule-targets.ts `checkRule`). */
export type RuleCheck = (rule: PolicyRule, force: boolean) => { warning: string | null } | Failure;

export interface PolicyOptions {
  store: Store;
  events: EventBus;
  config?: PolicyConfig | undefined;
  /** The one check every added or changed owner rule passes; absent, every rule is kept. */
  checkRule?: RuleCheck;
  now?: () => number;
}

const COLLECTION = 'policy';
/** Rate windows, one record per `rule|agent key` (authority.md §3). */
const RATES = 'policy-rates';
const KEYED: TransactionOptions = { isolation: 'keyed' };
interface RateWindow {
  times: number[];
}
const KEY = 'owner';
/** How long a view stands on a store that has no change mark (store.ts `changeMark`). */
const CACHE_MS = 1000;

/**
 * Policy edits this process has committed, on any store: the store's change
 * mark moves only on other connections' commits, so an edit made here through
 * another Policy (another store object on the same file) is seen through this
 * count, taken after its commit — as principals.ts counts its epoch changes.
 */
let localPolicyEdits = 0;

interface StoredPolicy {
  readOnly: ReadOnly;
  rules: Array<PolicyRule & { id: string }>;
}

/** `*` any run of characters (`:` and `/` included), `?` exactly one; everything else literal. */
export function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 's');
}

const compiled = new Map<string, RegExp>();
export function globMatches(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size > 10_000) compiled.clear();
    re = globToRegExp(pattern);
    compiled.set(pattern, re);
  }
  return re.test(value);
}

/** Whether a rule's match fields all hold for the call (absent = any). */
export function ruleMatches(rule: PolicyRule, call: PolicyCall): boolean {
  if (rule.door && !globMatches(rule.door, call.door) && !globMatches(rule.door, call.mount))
    return false;
  if (rule.tool && !globMatches(rule.tool, call.tool)) return false;
  if (rule.agent && (call.agent === null || !globMatches(rule.agent, call.agent))) return false;
  if (rule.effect && rule.effect !== call.effect) return false;
  if (rule.target) {
    const targets = call.targets.length > 0 ? call.targets : [''];
    if (!targets.some((t) => globMatches(rule.target!, t))) return false;
  }
  return true;
}

const readOnlyCovers = (readOnly: ReadOnly, call: Pick<PolicyCall, 'door' | 'mount'>) =>
  readOnly === true ||
  (Array.isArray(readOnly) && (readOnly.includes(call.door) || readOnly.includes(call.mount)));

const combineReadOnly = (a: ReadOnly, b: ReadOnly): ReadOnly =>
  a === true || b === true
    ? true
    : [...new Set([...(Array.isArray(a) ? a : []), ...(Array.isArray(b) ? b : [])])];

/** Pure evaluation over a list of rules, for the server and for tests. */
export function evaluate(
  rules: readonly ListedRule[],
  readOnly: ReadOnly,
  call: PolicyCall,
): PolicyVerdict {
  if (call.effect !== 'read' && readOnlyCovers(readOnly, call)) {
    return {
      decision: 'deny',
      rule: 'readOnly',
      matched: null,
      reason:
        readOnly === true
          ? 'the owner made this workspace read-only'
          : `the owner made ${call.mount} read-only`,
    };
  }
  for (const rule of rules) {
    if (ruleMatches(rule, call))
      return { decision: rule.decision, rule: rule.id, matched: rule, reason: rule.reason ?? null };
  }
  return DEFAULT_VERDICTS[call.effect];
}

export function parseRate(rate: string): { count: number; windowMs: number } {
  const m = RATE.exec(rate);
  if (!m) throw new Error(`bad rate '${rate}'`);
  return { count: Number(m[1]), windowMs: WINDOW_MS[m[2] as keyof typeof WINDOW_MS] };
}

const notFound = (id: string) =>
  failure('notFound', `No owner rule '${id}'; list the policy and use one of its rule ids.`);

const withWarning = (rule: ListedRule | Failure, warning: string | null): CheckedRule | Failure =>
  warning === null || 'ok' in rule ? rule : { ...rule, warning };

const fromConfig = (id: string) =>
  failure(
    'malformedRequest',
    `Rule '${id}' comes from the config file; edit the file's policy section and restart to change it.`,
  );

/** The owner's stored rules and read-only switch (none yet: empty). */
async function loadOwnerPolicy(store: Store): Promise<StoredPolicy> {
  const found = await store.read(
    (tx) => tx.records.get<StoredPolicy>(COLLECTION, KEY),
    ONE_STATEMENT,
  );
  return found?.value ?? { readOnly: false, rules: [] };
}

/** An owner-rule index from a 1-based position among all rules (the config's come first). */
function ownerIndexOf(
  position: number | undefined,
  ownerCount: number,
  configCount: number,
): number | Failure {
  if (position === undefined) return ownerCount;
  const index = position - 1 - configCount;
  if (!Number.isInteger(position) || index < 0 || index > ownerCount)
    return failure(
      'malformedRequest',
      `\`position\` must be an integer from ${configCount + 1} to ${configCount + ownerCount + 1} (the config file's ${configCount} rules come first); got ${JSON.stringify(position)}.`,
    );
  return index;
}

/**
 * A rule's rate for this agent: a sliding window of the last `count` call
 * times per rule and agent, read and written by key in one transaction
 * (instances take turns on it); `busy` with the wait when it is full.
 */
async function admitRate(
  store: Store,
  now: () => number,
  verdict: Parameters<Policy['admit']>[0],
  agent: Parameters<Policy['admit']>[1],
): Promise<Failure | null> {
  const rate = verdict.matched?.rate;
  if (!rate) return null;
  const { count, windowMs } = parseRate(rate);
  const retryAfterMs = await store.transaction(async (tx) => {
    const key = `${verdict.rule}|${agent ?? ''}`;
    const at = now();
    const found = await tx.records.get<RateWindow>(RATES, key);
    const times = (found?.value.times ?? []).filter((t) => t > at - windowMs);
    if (times.length >= count) return Math.max(1, times[times.length - count]! + windowMs - at);
    times.push(at);
    await tx.records.put(RATES, key, { times: times.slice(-count) });
    return 0;
  }, KEYED);
  if (retryAfterMs === 0) return null;
  return failure(
    'busy',
    `The owner's rule ${verdict.rule} allows ${rate} for this agent; wait ${Math.ceil(retryAfterMs / 1000)} s, then retry.`,
    { retryAfterMs, rule: verdict.rule },
  );
}

/** The rules in force: the config file's first, then the owner's, numbered from 1. */
function policyView(
  configRules: Array<PolicyRule & { id: string }>,
  configReadOnly: ReadOnly,
  owner: StoredPolicy,
): PolicyView {
  const rules: ListedRule[] = [
    ...configRules.map((r) => ({ ...r, source: 'config' as const })),
    ...owner.rules.map((r) => ({ ...r, source: 'owner' as const })),
  ].map((r, i) => ({ ...r, position: i + 1 }));
  return {
    readOnly: combineReadOnly(configReadOnly, owner.readOnly),
    readOnlyFromConfig: configReadOnly,
    readOnlyFromOwner: owner.readOnly,
    rules,
    defaults: DEFAULT_DECISIONS,
  };
}

/**
 * The policy view, read again only when it may have changed: with a store
 * change mark it stands while the mark and this process's edit count stand
 * (another process's edit is seen on the next call); without one, for
 * CACHE_MS. `drop` forgets it (an edit here, `policyChanged` on the bus).
 */
function cachedView(
  store: Store,
  now: () => number,
  load: () => Promise<PolicyView>,
): { view: () => Promise<PolicyView>; drop: () => void } {
  let cache: { at: number; mark: number | null; edits: number; view: Promise<PolicyView> } | null =
    null;
  const stands = (c: NonNullable<typeof cache>, mark: number | null): boolean =>
    c.edits === localPolicyEdits &&
    (mark === null ? c.mark === null && now() - c.at < CACHE_MS : c.mark === mark);
  const view = (): Promise<PolicyView> => {
    // Taken before the read: a commit during it moves the mark, and the next call reads again.
    const mark = store.changeMark?.() ?? null;
    if (cache && stands(cache, mark)) return cache.view;
    const fresh = { at: now(), mark, edits: localPolicyEdits, view: load() };
    cache = fresh;
    fresh.view.catch(() => {
      if (cache === fresh) cache = null;
    });
    return fresh.view;
  };
  return { view, drop: () => void (cache = null) };
}

export function createPolicy({
  store,
  events,
  config,
  checkRule = () => ({ warning: null }),
  now = Date.now,
}: PolicyOptions): Policy {
  const configRules: Array<PolicyRule & { id: string }> = (config?.rules ?? []).map((r, i) => ({
    ...r,
    id: `config-${i + 1}`,
  }));
  const configReadOnly: ReadOnly = config?.readOnly ?? false;
  const viewOf = (owner: StoredPolicy) => policyView(configRules, configReadOnly, owner);
  const { view, drop } = cachedView(store, now, () => loadOwnerPolicy(store).then(viewOf));

  events.subscribe(
    (e) => {
      if (e.data.event === 'policyChanged') drop();
    },
    { events: ['policyChanged'] },
  );

  /** Read-modify-write of the owner's rules in one transaction; publishes the change. */
  const edit = async <T>(
    change: (owner: StoredPolicy) => { next: StoredPolicy; result: T } | Failure,
  ): Promise<T | Failure> => {
    const outcome = await store
      .transaction(async (tx) => {
        const found = await tx.records.get<StoredPolicy>(COLLECTION, KEY);
        const changed = change(found?.value ?? { readOnly: false, rules: [] });
        if ('ok' in changed) return changed;
        await tx.records.put(COLLECTION, KEY, changed.next);
        return changed;
      })
      // Counted once it has ended, whatever it answered (a refused edit costs one reload).
      .finally(() => void localPolicyEdits++);
    if ('ok' in outcome) return outcome;
    drop();
    events.publish({ event: 'policyChanged' });
    return outcome.result;
  };

  const ownerIndex = (position: number | undefined, ownerCount: number) =>
    ownerIndexOf(position, ownerCount, configRules.length);

  const listed = (owner: StoredPolicy, id: string): ListedRule => {
    const rule = viewOf(owner).rules.find((r) => r.id === id);
    if (!rule) throw new Error(`rule ${id} vanished`);
    return rule;
  };

  return {
    async decide(call) {
      const v = await view();
      return evaluate(v.rules, v.readOnly, call);
    },

    admit: (verdict, agent) => admitRate(store, now, verdict, agent),

    view,

    async add(rule, position, options = {}) {
      const checked = checkRule(rule, options.force === true);
      if ('ok' in checked) return checked;
      const added = await edit((owner) => {
        const index = ownerIndex(position, owner.rules.length);
        if (typeof index !== 'number') return index;
        const id = `r-${randomBytes(4).toString('hex')}`;
        const rules = [...owner.rules];
        rules.splice(index, 0, { ...rule, id });
        const next = { ...owner, rules };
        return { next, result: listed(next, id) };
      });
      return withWarning(added, checked.warning);
    },

    async update(id, rule, options = {}) {
      const checked = checkRule(rule, options.force === true);
      if ('ok' in checked) return checked;
      const updated = await edit((owner) => {
        if (configRules.some((r) => r.id === id)) return fromConfig(id);
        const index = owner.rules.findIndex((r) => r.id === id);
        if (index < 0) return notFound(id);
        const rules = [...owner.rules];
        rules[index] = { ...rule, id };
        const next = { ...owner, rules };
        return { next, result: listed(next, id) };
      });
      return withWarning(updated, checked.warning);
    },

    remove(id) {
      return edit((owner) => {
        if (configRules.some((r) => r.id === id)) return fromConfig(id);
        const index = owner.rules.findIndex((r) => r.id === id);
        if (index < 0) return notFound(id);
        const removed = listed(owner, id);
        return {
          next: { ...owner, rules: owner.rules.filter((r) => r.id !== id) },
          result: removed,
        };
      });
    },

    move(id, position) {
      return edit((owner) => {
        if (configRules.some((r) => r.id === id)) return fromConfig(id);
        const from = owner.rules.findIndex((r) => r.id === id);
        if (from < 0) return notFound(id);
        const rules = owner.rules.filter((r) => r.id !== id);
        const index = ownerIndex(position, rules.length);
        if (typeof index !== 'number') return index;
        rules.splice(index, 0, owner.rules[from]!);
        const next = { ...owner, rules };
        return { next, result: listed(next, id) };
      });
    },

    async setReadOnly(readOnly) {
      await edit((owner) => ({ next: { ...owner, readOnly }, result: undefined }));
    },
  };
}
