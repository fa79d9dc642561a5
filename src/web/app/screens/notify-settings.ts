/**
 * Settings → Notifications (issue 30): Web Push on this device (the service
 * worker at `/sw.js`, the VAPID key from the server), the devices that get
 * them, and the recent deliveries of every destination. Adding a device
 * changes where asks go: the server asks for the owner's passkey where one
 * is set up (api.ts sends the request again with it).
 */
import { del, get, post } from '../api.js';
import { busy, fill, h, onOwner } from '../dom.js';
import { showError } from '../errors.js';
import { time } from '../format.js';

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
  const render = async () => {
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
    h('h3', {}, 'Recent deliveries'),
    deliveries,
  );
}
