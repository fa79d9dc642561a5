/**
 * The owner's read-only setting on the Policy screen (spec/authority.md §3):
 * the whole workspace, or some doors — the mounted ones as boxes, others by
 * name. Read-only refuses every write and destructive call before any rule
 * is read. The config file's setting is shown beside it; it can be changed
 * only in the file.
 */
import type { PolicyView } from '../../../../kernel/authority/policy.js';
import { put } from '../../api.js';
import { h } from '../../dom.js';
import { form as withSubmit } from '../../form.js';
import { readOnlyDoors, readOnlyText, readOnlyValue } from '../../policy-text.js';

const doorId = (door: string) => `policy-ro-${door.replace(/[^\w-]/g, '_')}`;

/** The form; `saved` gets the policy as the server answered the change. */
export function readOnlyForm(
  view: PolicyView,
  mounted: readonly string[],
  saved: (next: PolicyView) => void,
): HTMLFormElement {
  const owner = readOnlyDoors(view.readOnlyFromOwner);
  const whole = h('input', {
    id: 'policy-ro-whole',
    type: 'checkbox',
    checked: view.readOnlyFromOwner === true,
  });
  const boxes = mounted.map((door) =>
    h('input', {
      id: doorId(door),
      type: 'checkbox',
      value: door,
      checked: owner.includes(door),
    }),
  );
  const others = h('input', {
    id: 'policy-ro-others',
    type: 'text',
    autocomplete: 'off',
    placeholder: 'e.g. plane, scene',
    value: owner.filter((d) => !mounted.includes(d)).join(', '),
  });
  const sync = () => {
    for (const b of [...boxes, others]) b.disabled = whole.checked;
  };
  whole.addEventListener('change', sync);
  sync();
  const status = h('p', { class: 'meta', role: 'status' });
  const problem = h('p', { class: 'result-err', role: 'alert' });
  const submit = h('button', { type: 'submit' }, 'Save read-only');
  const inForce = h('p', { class: 'meta' });
  const showInForce = (v: PolicyView) =>
    (inForce.textContent = `In force: ${readOnlyText(v.readOnly)} is read-only.`);
  showInForce(view);
  const fromConfig =
    view.readOnlyFromConfig === false ||
    (Array.isArray(view.readOnlyFromConfig) && view.readOnlyFromConfig.length === 0)
      ? null
      : h(
          'p',
          { class: 'meta' },
          `The config file makes read-only: ${readOnlyText(view.readOnlyFromConfig)} (change it in the file).`,
        );
  const form = h(
    'form',
    { 'aria-label': 'Read-only' },
    h(
      'fieldset',
      {},
      h('legend', {}, 'Read-only (refuses every write and destructive call)'),
      h('label', { class: 'check', for: whole.id }, whole, 'The whole workspace'),
      ...boxes.map((b) => h('label', { class: 'check', for: b.id }, b, b.value)),
      h('label', { for: others.id }, 'Other doors or mounts (comma-separated)', others),
    ),
    fromConfig,
    inForce,
    h('div', { class: 'row' }, submit),
    status,
    problem,
  );
  return withSubmit(form, {
    button: submit,
    clear: [status, problem],
    read: () => [...boxes.filter((b) => b.checked).map((b) => b.value), ...others.value.split(',')],
    send: async (doors) => {
      const next = await put<PolicyView>('policy/read-only', {
        readOnly: readOnlyValue(whole.checked, doors),
      });
      status.textContent = 'Saved.';
      showInForce(next);
      saved(next);
    },
    failed: problem,
  });
}
