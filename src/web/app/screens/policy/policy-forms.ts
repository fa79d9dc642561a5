/**
 * The Policy screen's forms (spec/authority.md §3): a rule (added, or an
 * owner rule edited in place) and the "what would happen" tester. Each
 * shows the server's own sentence when it refuses (it says what to fix).
 */
import type { ListedRule } from '../../../../kernel/authority/policy.js';
import { post } from '../../api.js';
import { fill, h } from '../../dom.js';
import { form as withSubmit, refuse } from '../../form.js';
import { ruleBody, verdictWhy, type RuleFields } from '../../policy-text.js';

/** The datalist of mounted doors the door fields suggest (the screen renders it once). */
export const DOORS_LIST = 'policy-doors';

export function decisionBadge(decision: string): HTMLElement {
  return h('strong', { class: `decision decision-${decision}` }, decision);
}

function select(id: string, name: string, options: ReadonlyArray<[string, string]>, value = '') {
  const el = h(
    'select',
    { id, name },
    ...options.map(([v, label]) => h('option', { value: v }, label)),
  );
  el.value = value;
  return el;
}

const EFFECT_OPTIONS: ReadonlyArray<[string, string]> = [
  ['read', 'read'],
  ['write', 'write'],
  ['destructive', 'destructive'],
];

export interface RuleFormOptions {
  /** Prefix of the controls' ids, unique on the page. */
  idPrefix: string;
  /** The form's accessible name. */
  label: string;
  initial?: Partial<RuleFields>;
  /** Whether the form asks for a position (adding does; editing keeps the rule's place). */
  withPosition: boolean;
  submitLabel: string;
  /** Sends the rule; its answer (if any) is shown as the form's status. */
  onSubmit(body: Record<string, string | number>): Promise<string | void>;
  onCancel?: () => void;
}

/** A rule: decision, the match fields (globs; empty = any), reason, rate and, when adding, position. */
export function ruleForm(o: RuleFormOptions): HTMLFormElement {
  const id = (name: string) => `${o.idPrefix}-${name}`;
  const initial = o.initial ?? {};
  const text = (name: keyof RuleFields, label: string, attrs: Record<string, string> = {}) => {
    const input = h('input', {
      id: id(name),
      name,
      type: 'text',
      autocomplete: 'off',
      value: initial[name] ?? '',
      ...attrs,
    });
    return h('label', { for: id(name) }, label, input);
  };
  const decision = select(
    id('decision'),
    'decision',
    [
      ['allow', 'allow'],
      ['ask', 'ask'],
      ['deny', 'deny'],
    ],
    initial.decision ?? 'ask',
  );
  const effect = select(
    id('effect'),
    'effect',
    [['', 'any'], ...EFFECT_OPTIONS],
    initial.effect ?? '',
  );
  const status = h('p', { class: 'meta', role: 'status' });
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, o.submitLabel);
  const cancel = o.onCancel
    ? h('button', { type: 'button', onclick: () => o.onCancel?.() }, 'Cancel')
    : null;
  const form = h(
    'form',
    { class: 'rule-form', 'aria-label': o.label },
    h(
      'div',
      { class: 'row' },
      h('label', { for: id('decision') }, 'Decision', decision),
      text('door', 'Door', { list: DOORS_LIST, placeholder: 'any' }),
      text('tool', 'Tool', { placeholder: 'any, e.g. scene_*' }),
      text('agent', 'Agent', { placeholder: 'any' }),
      h('label', { for: id('effect') }, 'Effect', effect),
      text('target', 'Target', { placeholder: 'any, e.g. plane:pets.*' }),
    ),
    h(
      'div',
      { class: 'row' },
      text('reason', 'Reason (the agent sees it)', { maxlength: '500' }),
      text('rate', 'Rate per agent', { placeholder: 'e.g. 10/minute' }),
      o.withPosition
        ? h(
            'label',
            { for: id('position') },
            'Position',
            h('input', {
              id: id('position'),
              name: 'position',
              type: 'number',
              min: 1,
              step: 1,
              placeholder: 'last',
            }),
          )
        : null,
      submit,
      cancel,
    ),
    status,
    problem,
  );
  return withSubmit(form, {
    button: submit,
    clear: [status, problem],
    read: () => {
      const fields: Partial<RuleFields> = {};
      for (const el of Array.from(form.elements))
        if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement)
          fields[el.name as keyof RuleFields] = el.value;
      return fields;
    },
    send: async (fields) => {
      const said = await o.onSubmit(ruleBody(fields));
      if (o.withPosition) {
        form.reset();
        decision.value = 'ask';
      }
      if (said) status.textContent = said;
    },
    failed: problem,
  });
}

interface TestVerdict {
  decision: string;
  rule: string;
  reason: string | null;
  effect: string;
}

/** "What would happen": the decision and the rule the policy would give a described call. */
export function testerForm(rules: () => readonly ListedRule[]): HTMLFormElement {
  const field = (name: string, label: string, attrs: Record<string, string> = {}) =>
    h(
      'label',
      { for: `policy-test-${name}` },
      label,
      h('input', {
        id: `policy-test-${name}`,
        name,
        type: 'text',
        autocomplete: 'off',
        ...attrs,
      }),
    );
  const effect = select('policy-test-effect', 'effect', [
    ['', "the tool's own"],
    ...EFFECT_OPTIONS,
  ]);
  const result = h('p', { id: 'policy-test-result', role: 'status' });
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const submit = h('button', { type: 'submit' }, 'Test');
  const form = h(
    'form',
    { 'aria-label': 'What would happen' },
    h(
      'div',
      { class: 'row' },
      field('door', 'Door', { list: DOORS_LIST, required: 'true' }),
      field('tool', 'Tool'),
      field('agent', 'Agent', { placeholder: 'e.g. default' }),
      field('args', 'Arguments', { placeholder: '{"path": "/tmp/x"} (JSON)' }),
      field('target', 'Target'),
      h('label', { for: 'policy-test-effect' }, 'Effect', effect),
      submit,
    ),
    result,
    problem,
  );
  return withSubmit(form, {
    button: submit,
    clear: [problem],
    read: () => {
      const fields: Record<string, string> = {};
      for (const el of Array.from(form.elements))
        if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement)
          fields[el.name] = el.value;
      // A mounted tool's effect and targets come from the call's arguments.
      const { args: argsText = '', ...rest } = fields;
      let args: unknown;
      if (argsText.trim()) {
        try {
          args = JSON.parse(argsText) as unknown;
        } catch {
          args = undefined;
        }
        if (args === null || typeof args !== 'object' || Array.isArray(args))
          return refuse(
            'Arguments must be a JSON object of the call\'s arguments, e.g. {"path": "/tmp/x"}.',
          );
      }
      return { rest, args };
    },
    send: async ({ rest, args }) => {
      try {
        const verdict = await post<TestVerdict>('policy/test', {
          ...ruleBody(rest),
          ...(args === undefined ? {} : { args }),
        });
        result.dataset.decision = verdict.decision;
        fill(result, decisionBadge(verdict.decision), ' ', verdictWhy(verdict, rules()));
      } catch (err) {
        // A refused test leaves no verdict of an earlier one standing.
        delete result.dataset.decision;
        result.replaceChildren();
        throw err;
      }
    },
    failed: problem,
  });
}
