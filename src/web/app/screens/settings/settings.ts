/** Settings: the owner session (sign out), passkeys, notifications and the page bridge switch. */
import { doors } from '../../api.js';
import { busy, fill, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { bridgeSection } from '../../bridge.js';
import { signOut } from '../../session.js';
import { passkeysSection } from './passkeys.js';
import { notificationsSection } from './notify-settings.js';
import type { Screen } from '../screen.js';

export const settingsScreen: Screen = (root) => {
  const bridgeSlot = h('section', {});
  const out = h('button', { type: 'button' }, 'Sign out');
  onOwner(out, 'click', () => {
    void busy(out, () => signOut().catch((e: unknown) => showError(e, 'Could not sign out')));
  });
  fill(
    root,
    h('h1', { tabindex: '-1' }, 'Settings'),
    h(
      'section',
      { 'aria-labelledby': 'session-title' },
      h('h2', { id: 'session-title' }, 'Owner session'),
      h(
        'p',
        { class: 'meta' },
        'This browser is signed in as the owner. The session ends after 12 hours, or now with Sign out.',
      ),
      h('div', { class: 'row' }, out),
    ),
    passkeysSection(),
    notificationsSection(),
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
