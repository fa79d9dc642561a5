/**
 * The page bridge switch (spec/page.md): when the owner turns it on, the
 * workspace page loads `/bridge.js` from the page door and connects to the
 * relay, so an agent can drive this UI through the `wu_*` tools. Off by
 * default; the choice is remembered per browser, never the token.
 */
import { h } from './dom.js';

const KEY = 'airlock.bridge';

export function bridgeWanted(): boolean {
  return localStorage.getItem(KEY) === 'on';
}

export function bridgeSection(): HTMLElement {
  const box = h('input', { id: 'bridge-on', type: 'checkbox', name: 'bridge' });
  box.checked = bridgeWanted();
  const status = h(
    'p',
    { class: 'meta', role: 'status', id: 'bridge-status' },
    bridgeWanted() ? 'On' : 'Off',
  );
  box.addEventListener('change', () => {
    localStorage.setItem(KEY, box.checked ? 'on' : 'off');
    status.textContent = box.checked ? 'On' : 'Off';
  });
  return h(
    'section',
    { 'aria-labelledby': 'bridge-title' },
    h('h2', { id: 'bridge-title' }, 'Agent control of this page'),
    h(
      'p',
      { class: 'meta' },
      'When on, agents connected to the page door can read and operate this workspace page through the wu_* tools.',
    ),
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'bridge-on', class: 'check' }, box, 'Let agents drive this page'),
    ),
    status,
  );
}
