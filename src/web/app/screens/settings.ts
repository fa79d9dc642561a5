/** Settings: the bearer token (when the server needs one) and the page bridge switch. */
import { doors, setToken, token } from '../api.js';
import { fill, h } from '../dom.js';
import { clearErrors } from '../errors.js';
import { bridgeSection } from '../bridge.js';
import type { Screen } from './screen.js';

export const settingsScreen: Screen = (root) => {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'current-password',
    value: token() ?? '',
  });
  const saved = h('p', { class: 'meta', role: 'status' });
  const bridgeSlot = h('section', {});
  const username = h('input', {
    type: 'text',
    name: 'username',
    autocomplete: 'username',
    value: 'owner',
    hidden: true,
  });
  const form = h(
    'form',
    { class: 'row', 'aria-labelledby': 'token-title' },
    username,
    h('label', { for: 'token' }, 'Bearer token', input),
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(input.value.trim() || null);
    clearErrors();
    saved.textContent = input.value.trim() ? 'Saved for this tab. Reconnecting…' : 'Token cleared.';
    location.reload();
  });
  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Settings'),
    h(
      'section',
      { 'aria-labelledby': 'token-title' },
      h('h2', { id: 'token-title' }, 'Access token'),
      h(
        'p',
        { class: 'meta' },
        'Only needed when the server was started with --token (or AIRLOCK_TOKEN). It is kept for this browser tab only.',
      ),
      form,
      saved,
    ),
    bridgeSlot,
  );
  void doors().then((d) => bridgeSlot.replaceWith(bridgeSection(d.includes('page'))));
};

export function needsDoor(root: HTMLElement, title: string, door: string): void {
  fill(
    root,
    h('h1', { tabindex: '-1' }, title),
    h(
      'p',
      { class: 'empty' },
      `The ${door} door is not enabled on this server. Start it with: airlock serve --doors ${door}`,
    ),
  );
}
