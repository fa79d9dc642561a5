/**
 * The owner's policy (spec/authority.md §3): the rules in evaluation order
 * (policy-rules.ts), the defaults that decide when no rule matches, a form
 * to add a rule, the "what would happen" tester, and the read-only setting
 * (policy-forms.ts). Any change, here or elsewhere (CLI, another browser),
 * arrives as `policyChanged` and the screen reloads. `#/policy/<rule id>`
 * (the inbox links the rule that asked) brings that rule into view.
 */
import type { ListedRule, PolicyView } from '../../../../kernel/authority/policy.js';
import type { AuditEntry } from '../../../../kernel/records.js';
import { doors, get, post } from '../../api.js';
import { fill, h, keyed } from '../../dom.js';
import { showError } from '../../errors.js';
import { live, subscribe } from '../../live.js';
import { DOORS_LIST, decisionBadge, ruleForm, testerForm } from './policy-forms.js';
import { readOnlyForm } from './policy-read-only.js';
import { renderRule, ruleCard, type RulesContext } from './policy-rules.js';
import type { Screen } from '../screen.js';

/** The screen's sections, in reading order. */
function layout(
  root: HTMLElement,
  parts: {
    rulesEmpty: HTMLElement;
    rulesList: HTMLElement;
    defaults: HTMLElement;
    added: HTMLElement;
    tester: HTMLElement;
    readOnlySlot: HTMLElement;
    doorList: HTMLElement;
  },
): void {
  const { rulesEmpty, rulesList, defaults, added, tester, readOnlySlot, doorList } = parts;
  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Policy'),
    h(
      'p',
      { class: 'meta' },
      'Every tool call of every door is decided here before it runs: read-only doors refuse writes first, then the first rule that matches decides (allow, ask you in the inbox, or deny), then the defaults. Match fields are globs (* any text, ? one character); an empty field matches anything.',
    ),
    h(
      'section',
      { 'aria-labelledby': 'rules-title' },
      h('h2', { id: 'rules-title' }, 'Rules, in order'),
      rulesEmpty,
      rulesList,
      h('h3', { id: 'defaults-title' }, 'Then the defaults'),
      defaults,
    ),
    h(
      'section',
      { 'aria-labelledby': 'add-rule-title' },
      h('h2', { id: 'add-rule-title' }, 'Add a rule'),
      added,
    ),
    h(
      'section',
      { 'aria-labelledby': 'policy-test-title' },
      h('h2', { id: 'policy-test-title' }, 'What would happen?'),
      h(
        'p',
        { class: 'meta' },
        'Describe a call to see the decision and the rule that makes it. Nothing runs.',
      ),
      tester,
    ),
    h(
      'section',
      { 'aria-labelledby': 'read-only-title' },
      h('h2', { id: 'read-only-title' }, 'Read-only'),
      readOnlySlot,
    ),
    doorList,
  );
}

export const policyScreen: Screen = (root, route) => {
  const wanted = route.params[0] ?? null;
  let view: PolicyView | null = null;
  let mounted: string[] = [];
  /** The read-only setting the form shows, so a reload redraws it only when it changed. */
  let readOnlyShown = '';
  let scrolled = false;
  let loads = 0;

  const rulesList = h('ol', { class: 'cards rules', id: 'policy-rules', 'aria-label': 'Rules' });
  const rulesEmpty = h('p', { class: 'empty' }, 'No rules yet: the defaults below decide.');
  const defaults = h('dl', { class: 'defaults', id: 'policy-defaults' });
  const readOnlySlot = h('div', {});
  const doorList = h('datalist', { id: DOORS_LIST });

  const ctx: RulesContext = {
    view: () => view!,
    reload: () => load(),
    recent: new Map(),
  };

  const render = () => {
    if (!view) return;
    const v = view;
    rulesEmpty.hidden = v.rules.length > 0;
    keyed(
      rulesList,
      v.rules,
      (r) => r.id,
      (r) => ruleCard(r, ctx),
      (el, r) => renderRule(el, r, ctx),
    );
    for (const id of ctx.recent.keys())
      if (!v.rules.some((r) => r.id === id)) ctx.recent.delete(id);
    fill(
      defaults,
      ...Object.entries(v.defaults).flatMap(([effect, decision]) => [
        h('dt', {}, `${effect} calls`),
        h('dd', {}, decisionBadge(decision)),
      ]),
    );
    fill(doorList, ...mounted.map((d) => h('option', { value: d })));
    const key = JSON.stringify([v.readOnlyFromOwner, v.readOnlyFromConfig, mounted]);
    if (key !== readOnlyShown) {
      readOnlyShown = key;
      fill(
        readOnlySlot,
        readOnlyForm(v, mounted, (next) => {
          readOnlyShown = JSON.stringify([
            next.readOnlyFromOwner,
            next.readOnlyFromConfig,
            mounted,
          ]);
          view = next;
        }),
      );
    }
    const card = wanted
      ? Array.from(rulesList.children).find(
          (c): c is HTMLElement => c instanceof HTMLElement && c.dataset.ruleId === wanted,
        )
      : undefined;
    for (const c of rulesList.querySelectorAll('.highlight')) c.classList.remove('highlight');
    if (card) {
      card.classList.add('highlight');
      if (!scrolled) card.scrollIntoView({ block: 'center' });
      scrolled = true;
    }
  };

  const load = async () => {
    const mine = ++loads;
    try {
      const [v, d] = await Promise.all([get<PolicyView>('policy'), doors()]);
      // A later load (an edit, an event) may have answered first; keep the newest.
      if (mine !== loads) return;
      view = v;
      mounted = d;
    } catch (e) {
      showError(e, 'Could not load the policy');
      return;
    }
    render();
  };

  const added = ruleForm({
    idPrefix: 'rule-new',
    label: 'Add a rule',
    withPosition: true,
    submitLabel: 'Add rule',
    onSubmit: async (body) => {
      const rule = await post<ListedRule>('policy/rules', body);
      await load();
      return `Added as rule ${rule.position}.`;
    },
  });

  layout(root, {
    rulesEmpty,
    rulesList,
    defaults,
    added,
    tester: testerForm(() => view?.rules ?? []),
    readOnlySlot,
    doorList,
  });
  void load();

  return subscribe('event', () => {
    const e = live().lastEvent;
    if (e?.event === 'policyChanged' || e?.event === 'snapshot') void load();
    else if (e?.event === 'auditRecorded') {
      const rule = (e.entry as AuditEntry | undefined)?.rule;
      if (rule) ctx.recent.get(rule)?.refresh();
    }
  });
};
