/**
 * The owner's notification routes (authority.md §6): deliveries, and this
 * device's Web Push subscription. Adding a subscription changes where asks
 * go, so it is an owner decision (presence, issue 25); an agent's token is
 * refused on every route here (owner audience).
 */
import { z } from 'zod';
import type { Kernel } from '../../kernel/kernel.js';
import { failure } from '../../kernel/errors.js';
import { validateInput } from '../../kernel/calls/validate.js';
import type { RestRoute } from '../surface.js';
import { listDeliveries, type Notifier, type NotifyConfig } from '../../notify/webhooks.js';
import {
  BatchSecondsSchema,
  QuietHoursSchema,
  clearOwnerSettings,
  effectiveSettings,
  saveOwnerSettings,
} from '../../notify/quiet.js';
import {
  listSubscriptions,
  removeSubscription,
  saveSubscription,
  vapidKeys,
} from '../../notify/push.js';

const base64url = z
  .string()
  .regex(/^[A-Za-z0-9_-]+=*$/, 'must be base64url')
  .max(200);

const SubscribeBody = z
  .object({
    endpoint: z
      .string()
      .url()
      .max(2000)
      .refine((u) => /^https?:\/\//.test(u) && !new URL(u).username && !new URL(u).password, {
        message: 'must be an http(s) URL without user information',
      }),
    keys: z.object({ p256dh: base64url, auth: base64url }).strict(),
    /** What to call this device in Settings. */
    device: z.string().max(100).optional(),
    /** What the browser's PushSubscription.toJSON() also sends. */
    expirationTime: z.number().nullable().optional(),
  })
  .strict();

export function notifyRoutes(kernel: Kernel): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'notify/deliveries',
      summary:
        'Notification deliveries, newest first: the event, where it went (`webhook`: an origin, or email recipients), the `format` (`json`, `slack`, `ntfy`, `push`, `email`), `delivered`, `failed` (after its retries, with the last `error`) or `sending`',
      handler: async () => ({
        status: 200,
        body: { deliveries: await listDeliveries(kernel.store) },
      }),
    },
    {
      method: 'GET',
      path: 'notify/push/key',
      summary: 'The VAPID public key a browser subscribes with (`applicationServerKey`)',
      handler: async () => ({
        status: 200,
        body: { publicKey: (await vapidKeys(kernel.store)).publicKey },
      }),
    },
    {
      method: 'GET',
      path: 'notify/push/subscriptions',
      summary:
        'Devices that receive Web Push notifications (`id`, `device`, `service`, `createdAt`)',
      handler: async () => ({
        status: 200,
        body: {
          subscriptions: (await listSubscriptions(kernel.store)).map((s) => ({
            id: s.id,
            device: s.device,
            service: new URL(s.endpoint).origin,
            createdAt: s.createdAt,
          })),
        },
      }),
    },
    {
      method: 'POST',
      path: 'notify/push/subscriptions',
      summary:
        'Send asks to this device: a PushSubscription (`endpoint`, `keys.p256dh`, `keys.auth`) and an optional `device` name',
      decides: true,
      handler: async ({ body }) => {
        const parsed = validateInput(SubscribeBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { endpoint, keys, device } = parsed.value;
        const saved = await saveSubscription(kernel.store, {
          endpoint,
          keys,
          device: device ?? 'this device',
        });
        // The audit names the device and its push service, never the subscription's keys.
        const service = new URL(endpoint).origin;
        await kernel.audit.ownerAction(
          'notify.push.subscribe',
          'airlock',
          { id: saved.id, device: saved.device, service },
          'ok',
        );
        return {
          status: 201,
          body: {
            subscription: { id: saved.id, device: saved.device, service: new URL(endpoint).origin },
          },
        };
      },
    },
    {
      method: 'DELETE',
      path: 'notify/push/subscriptions/{id}',
      summary: 'Stop sending notifications to a device',
      handler: async ({ params }) => {
        const removed = await removeSubscription(kernel.store, params.id!);
        await kernel.audit.ownerAction(
          'notify.push.unsubscribe',
          'airlock',
          { id: params.id },
          removed ? 'ok' : 'notFound',
        );
        return removed
          ? { status: 200, body: { removed: params.id } }
          : failure(
              'notFound',
              `No push subscription ${params.id}; list them with GET /api/v1/notify/push/subscriptions.`,
            );
      },
    },
  ];
}

/** What the settings and test routes reach: the config's `notify` and the running notifier (late-bound). */
export interface NotifyControl {
  config: NotifyConfig;
  notifier?: Notifier | undefined;
}

const SettingsBody = z
  .object({
    /** null: no quiet hours. */
    quietHours: QuietHoursSchema.nullable().optional(),
    batchSeconds: BatchSecondsSchema.optional(),
    /** true: drop the owner's setting, the config file's stands again. */
    reset: z.literal(true).optional(),
  })
  .strict();

const TestBody = z.object({ destination: z.string().min(1).max(100) }).strict();

/** Quiet hours, batching, destinations and test sends (authority.md §6.3, §6.4). */
export function notifySettingsRoutes(kernel: Kernel, control: NotifyControl): RestRoute[] {
  const current = async () => ({
    settings: await effectiveSettings(kernel.store, control.config),
  });
  return [
    {
      method: 'GET',
      path: 'notify/settings',
      summary:
        'Quiet hours and batching for push and email: `quietHours` (`{from, to, timeZone?}` or null), `batchSeconds`, `source` (`owner` or `config`)',
      handler: async () => ({ status: 200, body: await current() }),
    },
    {
      method: 'PUT',
      path: 'notify/settings',
      summary:
        'Set quiet hours (`{from: "22:00", to: "07:00", timeZone?}` or null) and `batchSeconds` (0–3600; 0 = off); fields left out keep their value; `{"reset": true}` goes back to the config file',
      decides: true,
      handler: async ({ body }) => {
        const parsed = validateInput(SettingsBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { reset, quietHours, batchSeconds } = parsed.value;
        if (reset) await clearOwnerSettings(kernel.store);
        else {
          const before = await effectiveSettings(kernel.store, control.config);
          await saveOwnerSettings(kernel.store, {
            quietHours: quietHours === undefined ? before.quietHours : quietHours,
            batchSeconds: batchSeconds ?? before.batchSeconds,
          });
        }
        const after = await current();
        await kernel.audit.ownerAction('notify.settings', 'airlock', after.settings, 'ok');
        return { status: 200, body: after };
      },
    },
    {
      method: 'GET',
      path: 'notify/destinations',
      summary:
        'Where notifications go now: each webhook, push device and the email recipients (`id`, `label`, `format`)',
      handler: async () => ({
        status: 200,
        body: { destinations: (await control.notifier?.destinations()) ?? [] },
      }),
    },
    {
      method: 'POST',
      path: 'notify/test',
      summary:
        'Send a test notification to one destination (`{"destination": id}` from GET notify/destinations) through its real delivery path, once: `{sent: true}` or the reason it failed',
      decides: true,
      handler: async ({ body }) => {
        const parsed = validateInput(TestBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { destination } = parsed.value;
        if (!control.notifier)
          return failure(
            'unavailable',
            'Notifications are not running here; start `airlock serve`.',
          );
        let sent: true | null;
        try {
          sent = await control.notifier.test(destination);
        } catch (error) {
          await kernel.audit.ownerAction('notify.test', 'airlock', { destination }, 'failed');
          return failure(
            'upstreamError',
            `The test notification to ${destination} failed: ${(error as Error).message}. Check the address or the device and try again.`,
          );
        }
        if (!sent)
          return failure(
            'notFound',
            `No notification destination ${destination}; list them with GET /api/v1/notify/destinations.`,
          );
        await kernel.audit.ownerAction('notify.test', 'airlock', { destination }, 'ok');
        return { status: 200, body: { sent: true, destination } };
      },
    },
  ];
}
