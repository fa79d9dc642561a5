/**
 * Settings → Passkeys (issue 25): the owner's passkeys by name, adding one
 * on this device, removing one (the last only after a confirmation: without
 * a passkey, decisions no longer need the owner's presence). Adding a
 * further passkey and removing one are decisions: the server asks for an
 * existing passkey first (api.ts sends the request again with it).
 */
import { del, get } from '../../api.js';
import { busy, fill, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { form as withSubmit, refuse } from '../../form.js';
import { time } from '../../format.js';
import { enrolPasskey } from '../../passkey.js';

interface Listed {
  passkeys: { id: string; name: string; createdAt: number; lastUsedAt: number | null }[];
  presence: { required: boolean };
}

export function passkeysSection(): HTMLElement {
  const list = h('ul', { class: 'plain', id: 'passkey-list' });
  const status = h('p', { class: 'meta', id: 'passkey-status', role: 'status' });
  const name = h('input', {
    id: 'passkey-name',
    name: 'passkey-name',
    required: true,
    maxlength: 64,
  });
  const add = h('button', { type: 'submit', class: 'primary' }, 'Add a passkey');
  const form = h(
    'form',
    { class: 'row', 'aria-label': 'Add a passkey' },
    h('label', { for: 'passkey-name' }, 'Passkey name', name),
    add,
  );
  const section = h(
    'section',
    { 'aria-labelledby': 'passkeys-title' },
    h('h2', { id: 'passkeys-title' }, 'Passkeys'),
    status,
    list,
    form,
  );

  const render = async () => {
    const listed = await get<Listed>('passkeys');
    status.textContent =
      listed.passkeys.length === 0
        ? 'No passkey yet. Add one: then every approval and every change to policy, agents, upstreams or credentials needs it.'
        : listed.presence.required
          ? 'Every approval and every change to policy, agents, upstreams or credentials needs one of these passkeys.'
          : 'Passkeys are enrolled, but this server does not ask for them (owner.presence is "none").';
    fill(
      list,
      ...listed.passkeys.map((p) => {
        const remove = h('button', { type: 'button', class: 'danger' }, `Remove ${p.name}`);
        const row = h(
          'li',
          { 'data-passkey-id': p.id },
          h('strong', {}, p.name),
          ` added ${time(p.createdAt)}`,
          p.lastUsedAt ? `, last used ${time(p.lastUsedAt)} ` : ' ',
          remove,
        );
        onOwner(remove, 'click', () => {
          const last = listed.passkeys.length === 1;
          const go = async () => {
            await del(`passkeys/${encodeURIComponent(p.id)}${last ? '?confirm=last' : ''}`);
            await render();
          };
          if (!last) {
            void busy(remove, () =>
              go().catch((e: unknown) => showError(e, 'Could not remove the passkey')),
            );
            return;
          }
          const sure = h('button', { type: 'button', class: 'danger' }, `Remove my last passkey`);
          const keep = h('button', { type: 'button' }, 'Keep it');
          fill(
            row,
            h(
              'span',
              {},
              `${p.name} is your last passkey: without one, approvals no longer need your presence. Remove it?`,
            ),
            sure,
            keep,
          );
          sure.focus();
          onOwner(keep, 'click', () => void render());
          onOwner(
            sure,
            'click',
            () =>
              void busy(sure, () =>
                go().catch((e: unknown) => showError(e, 'Could not remove the passkey')),
              ),
          );
        });
        return row;
      }),
    );
  };

  withSubmit(form, {
    button: add,
    read: () => name.value.trim() || refuse(),
    send: async (wanted) => {
      await enrolPasskey(wanted);
      name.value = '';
      await render();
    },
    failed: 'Could not add the passkey',
  });
  void render().catch((e: unknown) => showError(e, 'Could not list the passkeys'));
  return section;
}
