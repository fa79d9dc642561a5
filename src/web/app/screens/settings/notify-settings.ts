/**
 * Settings → Notifications (issue 30): Web Push on this device (the service
 * worker at `/sw.js`, the VAPID key from the server), the devices that get
 * them, and the recent deliveries of every destination. Adding a device
 * changes where asks go: the server asks for the owner's passkey where one
 * is set up (api.ts sends the request again with it).
 */
import { del, get, post, put } from '../../api.js';
import { busy, field, fill, h, onOwner } from '../../dom.js';
import { showError } from '../../errors.js';
import { form as withSubmit } from '../../form.js';
import { time } from '../../format.js';

interface Device {
  id: string;
  device: string;
  service: string;
  createdAt: number;
}
interface Delivery {
  eventId: number;
  event: string;
  webhook: string;
  format: string;
  status: string;
  attempts: number;
  error: string | null;
  updatedAt: number;
}

const keyBytes = (b64: string) => {
  const raw = atob(b64.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
};

async function subscribeThisDevice(): Promise<void> {
  if (!('serviceWorker' in navigator) || !('PushManager' in window))
    throw new Error('This browser cannot receive push notifications.');
  if ((await Notification.requestPermission()) !== 'granted')
    throw new Error('Notifications are blocked for this site in the browser’s settings.');
  const registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  await navigator.serviceWorker.ready;
  const { publicKey } = await get<{ publicKey: string }>('notify/push/key');
  const sub = await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: keyBytes(publicKey),
  });
  const device = navigator.userAgent.replace(/^.*\) /, '').slice(0, 100) || 'this device';
  await post('notify/push/subscriptions', { ...sub.toJSON(), device });
}

export function notificationsSection(): HTMLElement {
  const devices = h('ul', { class: 'plain', id: 'push-devices' });
  const deliveries = h('ul', { class: 'plain', id: 'notify-deliveries' });
  const on = h('button', { type: 'button', class: 'primary' }, 'Notify me on this device');
  const render = async (): Promise<void> => {
    const [{ subscriptions }, { deliveries: recent }] = await Promise.all([
      get<{ subscriptions: Device[] }>('notify/push/subscriptions'),
      get<{ deliveries: Delivery[] }>('notify/deliveries'),
    ]);
    fill(
      devices,
      ...(subscriptions.length === 0
        ? [h('li', { class: 'empty' }, 'No device gets push notifications yet.')]
        : subscriptions.map((d) => {
            const remove = h('button', { type: 'button', class: 'danger' }, `Stop ${d.device}`);
            onOwner(remove, 'click', () => {
              void busy(remove, () =>
                del(`notify/push/subscriptions/${encodeURIComponent(d.id)}`)
                  .then(render)
                  .catch((e: unknown) => showError(e, 'Could not remove the device')),
              );
            });
            return h(
              'li',
              {},
              h('strong', {}, d.device),
              ` via ${d.service} since ${time(d.createdAt)} `,
              remove,
            );
          })),
    );
    fill(
      deliveries,
      ...(recent.length === 0
        ? [h('li', { class: 'empty' }, 'Nothing sent yet.')]
        : recent
            .slice(0, 20)
            .map((d) =>
              h(
                'li',
                { 'data-status': d.status },
                `${time(d.updatedAt)} ${d.event} → ${d.webhook} (${d.format}): ${d.status}`,
                d.error ? ` — ${d.error}` : '',
              ),
            )),
    );
  };
  onOwner(on, 'click', () => {
    void busy(on, () =>
      subscribeThisDevice()
        .then(render)
        .catch((e: unknown) => showError(e, 'Could not turn on notifications')),
    );
  });
  void render().catch((e: unknown) => showError(e, 'Could not load notifications'));
  return h(
    'section',
    { 'aria-labelledby': 'notify-title' },
    h('h2', { id: 'notify-title' }, 'Notifications'),
    h(
      'p',
      { class: 'meta' },
      'New asks and failed jobs reach you here, on webhooks and by email (webhooks and email are set in the config file: notify.webhooks, notify.smtp). A notification says who asks for what and links to the card; deciding still needs your sign-in.',
    ),
    devices,
    h('div', { class: 'row' }, on),
    quietHoursForm(render),
    destinationsList(render),
    h('h3', {}, 'Recent deliveries'),
    deliveries,
  );
}

interface Settings {
  quietHours: { from: string; to: string; timeZone?: string } | null;
  batchSeconds: number;
  source: 'owner' | 'config';
}

/** Quiet hours and batching for push and email (authority.md §6.3); the owner's setting wins over the config file's. */
function quietHoursForm(changed: () => Promise<void>): HTMLElement {
  const on = h('input', { type: 'checkbox', id: 'quiet-on' });
  const from = h('input', { type: 'time', id: 'quiet-from', value: '22:00', required: '' });
  const to = h('input', { type: 'time', id: 'quiet-to', value: '07:00', required: '' });
  const zone = h('input', {
    type: 'text',
    id: 'quiet-zone',
    placeholder: Intl.DateTimeFormat().resolvedOptions().timeZone,
  });
  const batch = h('input', { type: 'number', id: 'batch-seconds', min: '0', max: '3600' });
  const source = h('p', { class: 'meta', id: 'quiet-source' });
  const save = h('button', { type: 'submit', class: 'primary' }, 'Save quiet hours');
  const show = (s: Settings) => {
    on.checked = s.quietHours !== null;
    if (s.quietHours) {
      from.value = s.quietHours.from;
      to.value = s.quietHours.to;
      zone.value = s.quietHours.timeZone ?? '';
    }
    batch.value = String(s.batchSeconds);
    source.textContent =
      s.source === 'owner'
        ? 'Set here (overrides the config file).'
        : 'From the config file (notify.quietHours, notify.batchSeconds) until you save here.';
  };
  const form = h(
    'form',
    { id: 'quiet-hours' },
    h('h3', {}, 'Quiet hours'),
    h(
      'p',
      { class: 'meta' },
      'No push or email between these hours, except asks of rules marked urgent. Webhooks are not held back. Several asks from one agent come as one notification with a count.',
    ),
    field('Quiet hours on ', on),
    field('From ', from),
    field('To ', to),
    field('Time zone ', zone),
    field('One notification per agent every (seconds, 0 = each ask) ', batch),
    source,
    h('div', { class: 'row' }, save),
  );
  withSubmit(form, {
    button: save,
    read: () =>
      on.checked
        ? {
            from: from.value,
            to: to.value,
            ...(zone.value.trim() ? { timeZone: zone.value.trim() } : {}),
          }
        : null,
    send: async (quietHours) => {
      const { settings } = await put<{ settings: Settings }>('notify/settings', {
        quietHours,
        batchSeconds: Number(batch.value || 0),
      });
      show(settings);
      changed();
    },
    failed: 'Could not save quiet hours',
  });
  void get<{ settings: Settings }>('notify/settings')
    .then(({ settings }) => show(settings))
    .catch((e: unknown) => showError(e, 'Could not load quiet hours'));
  return form;
}

interface Destination {
  id: string;
  label: string;
  format: string;
}

/** Every destination with "Send a test notification" (its real delivery path, once). */
function destinationsList(changed: () => Promise<void>): HTMLElement {
  const list = h('ul', { class: 'plain', id: 'notify-destinations' });
  const load = async () => {
    const { destinations } = await get<{ destinations: Destination[] }>('notify/destinations');
    fill(
      list,
      ...(destinations.length === 0
        ? [h('li', { class: 'empty' }, 'No webhook, device or email address yet.')]
        : destinations.map((d) => {
            const result = h('span', { class: 'meta', role: 'status' });
            const send = h('button', { type: 'button' }, 'Send a test notification');
            onOwner(send, 'click', () => {
              result.textContent = '';
              void busy(send, () =>
                post('notify/test', { destination: d.id })
                  .then(() => (result.textContent = ' Sent.'))
                  .catch((e: unknown) => showError(e, `The test to ${d.label} failed`))
                  .then(changed),
              );
            });
            return h('li', { 'data-format': d.format }, `${d.label} (${d.format}) `, send, result);
          })),
    );
  };
  void load().catch((e: unknown) => showError(e, 'Could not load the destinations'));
  return h('div', {}, h('h3', {}, 'Where notifications go'), list);
}
