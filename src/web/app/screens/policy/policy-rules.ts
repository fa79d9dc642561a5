/**
 * The Policy screen's rules, one card each in evaluation order
 * (spec/authority.md §3): position, decision, what it matches, rate, reason
 * and where it comes from. The owner's rules move up and down, are edited in
 * place and deleted (one made from an inbox card is undone in one click);
 * the config file's are read-only here. Every rule lists
 * its recent decisions from the audit trail on demand.
 */
import type { ListedRule, PolicyView } from '../../../../kernel/authority/policy.js';
import type { AuditEntry } from '../../../../kernel/records.js';
import { del, get, post, put } from '../../api.js';
import { busy, fill, h, onOwner, type Child } from '../../dom.js';
import { shortConnection, time } from '../../format.js';
import { matchText, originText, ruleFields } from '../../policy-text.js';
import { href } from '../../router.js';
import { decisionBadge, ruleForm } from './policy-forms.js';
import { messageOf } from '../../form.js';

/** How many of a rule's decisions its card lists (the audit screen has them all). */
const RECENT = 10;

export interface RecentDecisions {
  el: HTMLDetailsElement;
  /** Loads again if open (a new audit entry named this rule). */
  refresh(): void;
}

export interface RulesContext {
  view(): PolicyView;
  reload(): Promise<void>;
  /** Each rule's recent-decisions expander, kept across re-renders so an open one stays open. */
  recent: Map<string, RecentDecisions>;
}

function recentDecisions(ruleId: string): RecentDecisions {
  const body = h('div', { class: 'recent-body' });
  const el = h('details', { class: 'recent' }, h('summary', {}, 'Recent decisions'), body);
  const load = async () => {
    try {
      // Newest first, only as many as shown.
      const { entries: recent } = await get<{ entries: AuditEntry[] }>(
        `audit?rule=${encodeURIComponent(ruleId)}&order=desc&limit=${RECENT}`,
      );
      fill(
        body,
        recent.length > 0
          ? h(
              'ul',
              { class: 'recent-list' },
              ...recent.map((e) =>
                h(
                  'li',
                  { 'data-audit-id': e.id },
                  `${time(e.at)} · `,
                  decisionBadge(e.decision ?? '—'),
                  ` · ${e.door} `,
                  h('code', {}, e.tool),
                  ` · ${shortConnection(e.connection)} · `,
                  h('span', { class: e.result === 'ok' ? 'result-ok' : 'result-err' }, e.result),
                ),
              ),
            )
          : h('p', { class: 'empty' }, 'No decisions by this rule yet.'),
        h(
          'p',
          {},
          h('a', { href: `${href('audit')}?rule=${encodeURIComponent(ruleId)}` }, 'All of them'),
          ' in the audit trail',
        ),
      );
    } catch (e) {
      fill(body, h('p', { class: 'result-err' }, messageOf(e)));
    }
  };
  el.addEventListener('toggle', () => {
    if (el.open) {
      fill(body, h('p', { class: 'meta' }, 'Loading…'));
      void load();
    }
  });
  return { el, refresh: () => void (el.open ? load() : undefined) };
}

/** The card's content for a rule; an owner rule being edited keeps its form. */
export function renderRule(el: HTMLElement, rule: ListedRule, ctx: RulesContext): void {
  el.dataset.ruleId = rule.id;
  el.dataset.source = rule.source;
  el.dataset.decision = rule.decision;
  if (el.dataset.editing) return;
  const titleId = `rule-${rule.id}-title`;
  el.setAttribute('aria-labelledby', titleId);
  let recent = ctx.recent.get(rule.id);
  if (!recent) ctx.recent.set(rule.id, (recent = recentDecisions(rule.id)));
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const owner = rule.source === 'owner';
  fill(
    el,
    h(
      'h3',
      { id: titleId, tabindex: '-1' },
      h('span', { class: 'position' }, `${rule.position}.`),
      ' ',
      decisionBadge(rule.decision),
      ' ',
      h('span', { class: 'match' }, matchText(rule)),
    ),
    h(
      'p',
      { class: 'meta' },
      h('span', { class: 'source' }, owner ? 'yours' : 'config file'),
      ` · id ${rule.id}`,
      rule.rate ? ` · at most ${rule.rate} per agent` : '',
      rule.origin ? ' · ' : '',
      rule.origin ? h('span', { class: 'origin' }, originText(rule.origin)) : null,
    ),
    rule.reason ? h('p', { class: 'meta reason' }, `Reason: ${rule.reason}`) : null,
    owner
      ? actions(el, rule, ctx, problem)
      : h('p', { class: 'meta' }, "Change it in the config file's policy section, then restart."),
    recent.el,
    problem,
  );
}

function actions(
  el: HTMLElement,
  rule: ListedRule,
  ctx: RulesContext,
  problem: HTMLElement,
): HTMLElement {
  const rules = ctx.view().rules;
  const first = rules.filter((r) => r.source === 'config').length + 1;
  const n = rule.position;
  const button = (action: string, label: string, text: Child, attrs = {}) =>
    h('button', { type: 'button', 'data-action': action, 'aria-label': label, ...attrs }, text);
  const up = button('up', `Move rule ${n} up`, 'Move up', { disabled: n <= first });
  const down = button('down', `Move rule ${n} down`, 'Move down', {
    disabled: n >= rules.length,
  });
  const edit = button('edit', `Edit rule ${n}`, 'Edit');
  const remove = button('delete', `Delete rule ${n}`, 'Delete', { class: 'danger' });
  // A rule made from an inbox card ("Always allow" / "Always deny") is undone in one click.
  const undo = rule.origin
    ? button('undo', `Undo rule ${n}`, 'Undo', {
        title: 'Remove this rule: the calls it matched are decided as before',
      })
    : null;
  const row = h('div', { class: 'row' }, up, down, edit, remove, undo);

  const act = (b: HTMLButtonElement, run: () => Promise<unknown>, after?: () => void) =>
    void busy(b, async () => {
      problem.textContent = '';
      try {
        await run();
        await ctx.reload();
        after?.();
      } catch (e) {
        problem.textContent = messageOf(e);
      }
    });
  const move = (b: HTMLButtonElement, to: number) =>
    act(
      b,
      () => post(`policy/rules/${encodeURIComponent(rule.id)}/move`, { position: to }),
      () => {
        // The card was re-rendered in its new place: keep the keyboard on the same move.
        const again = el.querySelector<HTMLButtonElement>(`[data-action="${b.dataset.action}"]`);
        (again && !again.disabled ? again : el.querySelector<HTMLElement>('h3'))?.focus();
      },
    );
  onOwner(up, 'click', () => move(up, n - 1));
  onOwner(down, 'click', () => move(down, n + 1));

  onOwner(edit, 'click', () => {
    el.dataset.editing = 'true';
    const stop = (latest: ListedRule) => {
      delete el.dataset.editing;
      renderRule(el, latest, ctx);
    };
    fill(
      el,
      h('h3', { id: `rule-${rule.id}-title` }, `Edit rule ${n}`),
      ruleForm({
        idPrefix: `rule-${rule.id}`,
        label: `Edit rule ${n}`,
        initial: ruleFields(rule),
        withPosition: false,
        submitLabel: 'Save rule',
        onSubmit: async (body) => {
          stop(await put<ListedRule>(`policy/rules/${encodeURIComponent(rule.id)}`, body));
          await ctx.reload();
        },
        onCancel: () => stop(ctx.view().rules.find((r) => r.id === rule.id) ?? rule),
      }),
    );
    el.querySelector<HTMLElement>('select, input')?.focus();
  });

  if (undo)
    onOwner(undo, 'click', () =>
      act(undo, () => del(`policy/rules/${encodeURIComponent(rule.id)}`)),
    );
  onOwner(remove, 'click', () => {
    const sure = h('button', { type: 'button', class: 'danger' }, `Delete rule ${n}`);
    const keep = h('button', { type: 'button' }, 'Keep it');
    fill(
      row,
      h('span', {}, `Delete rule ${n}? Calls it matched fall to the next rule.`),
      sure,
      keep,
    );
    sure.focus();
    onOwner(keep, 'click', () => renderRule(el, rule, ctx));
    onOwner(sure, 'click', () =>
      act(sure, () => del(`policy/rules/${encodeURIComponent(rule.id)}`)),
    );
  });
  return row;
}

export function ruleCard(rule: ListedRule, ctx: RulesContext): HTMLElement {
  const el = h('li', { class: 'card rule' });
  renderRule(el, rule, ctx);
  return el;
}
