/**
 * A policy ask in the inbox (spec/authority.md §3): the owner's policy asked
 * before one exact call runs. The card shows who asks (agent, door, tool),
 * the rule that asked and the door's preview (secrets already redacted by
 * the server); the owner approves this call once, approves this rule, agent
 * and target for 15 minutes, or denies with a reason the agent sees. "Always
 * allow" / "Always deny" turn the decision into an owner rule for this agent,
 * door and tool (and target, when chosen), placed first among the owner's
 * rules, marked with where it came from and removable on the Policy screen.
 */
import type { ListedRule, PolicyView } from '../../../../kernel/authority/policy.js';
import type { Approval } from '../../../../kernel/records.js';
import { get, post } from '../../api.js';
import { forAgent, h, markOwner } from '../../dom.js';
import { shortConnection, time } from '../../format.js';
import {
  alwaysRule,
  alwaysText,
  approvalScopes,
  decidedBy,
  isRuleId,
  ruleTarget,
} from '../../policy-text.js';
import { readablePreview, thumbnailsOf } from '../../preview.js';
import { href } from '../../router.js';
import { askedSpan, decider } from './approval-decide.js';

/** The preview as a summary line and a definition list of its details. */
export function previewView(preview: unknown, fallback: string): HTMLElement {
  const { summary, details } = readablePreview(preview, fallback);
  return h(
    'div',
    { class: 'preview' },
    h('p', { class: 'preview-summary' }, summary),
    details.length > 0
      ? h(
          'dl',
          {},
          ...details.flatMap((d) => [
            h('dt', {}, d.label),
            h('dd', { 'data-detail': d.key }, d.block ? h('pre', {}, d.text) : d.text),
          ]),
        )
      : null,
    thumbnailsView(preview),
  );
}

/** Before/after pictures of each page the call touches (scene), or nothing. */
function thumbnailsView(preview: unknown): HTMLElement | null {
  const pages = thumbnailsOf(preview);
  if (pages.length === 0) return null;
  const picture = (src: string | null, page: string, when: string) =>
    h(
      'figure',
      {},
      src
        ? h('img', { src, alt: `${page} ${when}`, 'data-thumbnail': when })
        : h('span', { class: 'muted', 'data-thumbnail': when }, 'removed'),
      h('figcaption', {}, when),
    );
  return h(
    'div',
    { class: 'thumbnails' },
    ...pages.map((p) =>
      h(
        'div',
        { class: 'thumbnail-pair', 'data-page': p.page },
        h('p', {}, p.page),
        picture(p.before, p.page, 'before'),
        picture(p.after, p.page, 'after'),
      ),
    ),
  );
}

/**
 * "Always allow" or "always deny": adds the owner rule, then decides this ask
 * by it; a sentence when no rule can be added here.
 */
async function alwaysRuleAdded(a: Approval, decision: 'allow' | 'deny', onlyTarget: boolean) {
  const rule = alwaysRule(a, decision, onlyTarget);
  if (typeof rule === 'string') return rule;
  // An owner rule comes after the config file's: it cannot overrule one that asked.
  const { rules } = await get<PolicyView>('policy');
  const asking = rules.find((r) => r.id === a.rule);
  if (asking?.source === 'config')
    return `Rule ${asking.position}, which asked, is in the config file and comes before any rule added here: change it in the config file's policy section instead.`;
  const position = rules.filter((r) => r.source === 'config').length + 1;
  const added = await post<ListedRule>('policy/rules', { ...rule, position });
  return decision === 'allow'
    ? { scope: 'once' }
    : { reason: `The owner always denies this call (rule ${added.id}).` };
}

/** Who asked, for what, by which rule, on which connection, and whether it is still connected. */
function askFacts(a: Approval, rule: HTMLElement): HTMLElement[] {
  return [
    h(
      'p',
      { class: 'meta' },
      'Agent ',
      h('strong', { class: 'agent' }, a.agent ?? 'none'),
      ' · door ',
      a.door,
      ' · tool ',
      h('code', {}, a.tool ?? '—'),
      ' · asked by ',
      rule,
    ),
    h(
      'p',
      { class: 'meta' },
      'Connection ',
      h('span', { title: a.connection, class: 'connection' }, shortConnection(a.connection)),
      ' · ',
      askedSpan(a.createdAt),
    ),
    ...(a.orphanedAt != null
      ? [
          h(
            'p',
            { class: 'note orphaned' },
            `The agent disconnected at ${time(a.orphanedAt)}; approving lets its next identical call run once.`,
          ),
        ]
      : []),
  ];
}

export function policyAskCard(
  a: Approval,
  focusNext: (from: HTMLElement) => void,
  ids: () => readonly string[] = () => [a.id],
): HTMLElement {
  const headingId = `approval-${a.id}-title`;
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const decide = decider(ids, problem, () => focusNext(card));
  const reasonId = `approval-${a.id}-reason`;
  const reason = h('input', {
    id: reasonId,
    name: 'reason',
    type: 'text',
    autocomplete: 'off',
    maxlength: 500,
  });
  // Each approve button says what it lets through (policy-text.ts `approvalScopes`).
  const scopes = approvalScopes(a);
  const once = h(
    'button',
    { type: 'button', class: 'primary', 'data-scope': 'once' },
    'Approve once ',
    h('span', { class: 'scope' }, scopes.once),
  );
  const quarter = h(
    'button',
    { type: 'button', 'data-scope': '15m' },
    'Approve 15 minutes ',
    h('span', { class: 'scope' }, scopes.quarter),
  );
  const deny = h('button', { type: 'button', class: 'danger' }, 'Deny');
  decide(once, 'approve', async () => ({ scope: 'once' }));
  decide(quarter, 'approve', async () => ({ scope: '15m' }));
  // Narrowed to the same file, note or page, where the door names one.
  const narrow = scopes.narrow
    ? h(
        'button',
        { type: 'button', 'data-scope': '15m-subject' },
        'Approve this one 15 minutes ',
        h('span', { class: 'scope' }, scopes.narrow),
      )
    : null;
  if (narrow) decide(narrow, 'approve', async () => ({ scope: '15m-subject' }));
  const target = ruleTarget(a);
  const onlyTarget = target
    ? h('input', { id: `approval-${a.id}-only-target`, type: 'checkbox', name: 'only-target' })
    : null;
  const always = (decision: 'allow' | 'deny') => () =>
    alwaysRuleAdded(a, decision, onlyTarget?.checked ?? false);
  const allowAlways = h(
    'button',
    { type: 'button', 'data-scope': 'always-allow' },
    'Always allow ',
    h('span', { class: 'scope' }, alwaysText(a)),
  );
  const denyAlways = h(
    'button',
    { type: 'button', class: 'danger', 'data-scope': 'always-deny' },
    'Always deny ',
    h('span', { class: 'scope' }, alwaysText(a)),
  );
  decide(allowAlways, 'approve', always('allow'));
  decide(denyAlways, 'deny', always('deny'));
  if (onlyTarget) markOwner(onlyTarget);
  decide(deny, 'deny', async () => {
    const why = reason.value.trim();
    return why ? { reason: why } : {};
  });
  markOwner(reason);
  const rule = isRuleId(a.rule)
    ? h('a', { href: href('policy', a.rule), class: 'rule' }, decidedBy(a.rule))
    : h('span', { class: 'rule' }, decidedBy(a.rule));
  const card = forAgent(
    h(
      'li',
      {
        class: 'card approval ask',
        'aria-labelledby': headingId,
        'data-approval-id': a.id,
        'data-kind': 'policy',
      },
      h('h3', { id: headingId }, `Policy ask: ${a.tool ?? 'a call'} on ${a.door}`),
      ...askFacts(a, rule),
      previewView(a.preview, a.summary),
      h(
        'div',
        { class: 'row' },
        once,
        quarter,
        ...(narrow ? [narrow] : []),
        h('label', { for: reasonId }, 'Reason if you deny (the agent sees it)', reason),
        deny,
      ),
      h(
        'div',
        { class: 'row always' },
        allowAlways,
        denyAlways,
        onlyTarget
          ? h(
              'label',
              { for: onlyTarget.id },
              onlyTarget,
              ' Only for target ',
              h('code', {}, target ?? ''),
            )
          : null,
      ),
      problem,
    ),
    a.agent,
  );
  return card;
}
