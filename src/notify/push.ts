/**
 * Web Push for the owner (authority.md §6): each browser where the owner
 * turned notifications on (Settings) is a subscription in the store
 * (`notify-push`); every new ask and failed job is pushed to each, encrypted
 * per RFC 8291 (`aes128gcm`) and signed with Airlock's VAPID key (RFC 8292).
 * The payload carries the notice's title, its one line and the card's link —
 * no argument, preview or secret. A push service that answers 404 or 410
 * has forgotten the subscription: it is removed.
 *
 * The VAPID key pair is made once and kept in the store (`notify-vapid`), so
 * every instance on a shared store signs with the same key the browsers
 * subscribed with.
 */
import { createHash } from 'node:crypto';
import type WebPush from 'web-push';
import type { Store } from '../kernel/store.js';
import { refusedDestination } from './destination.js';
import type { Notice } from './formats.js';
import { DELIVERY_TIMEOUT_MS, checkResponse, post, type DestinationSource } from './webhooks.js';

export const VAPID = 'notify-vapid';
export const PUSH_SUBSCRIPTIONS = 'notify-push';
/** How long a push service keeps an undelivered notification (seconds). */
export const PUSH_TTL_SECONDS = 24 * 3600;

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

export interface PushSubscriptionRecord {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** What the owner called this device (default: the browser's user agent, shortened). */
  device: string;
  createdAt: number;
}

/** web-push, loaded when a push is first sent or keys are first made (not at start-up). */
let library: Promise<typeof WebPush> | undefined;
const webPush = () => (library ??= import('web-push').then((m) => m.default));

/** Airlock's VAPID keys: read from the store, or made and stored by the first instance that needs them. */
export async function vapidKeys(store: Store): Promise<VapidKeys> {
  const kept = await store.read((tx) => tx.records.get<VapidKeys>(VAPID, 'keys'));
  if (kept) return kept.value;
  const fresh = (await webPush()).generateVAPIDKeys();
  return store.transaction(
    async (tx) => {
      const raced = await tx.records.get<VapidKeys>(VAPID, 'keys');
      if (raced) return raced.value;
      await tx.records.put(VAPID, 'keys', fresh);
      return fresh;
    },
    { isolation: 'keyed' },
  );
}

export const subscriptionId = (endpoint: string) =>
  'push_' + createHash('sha256').update(endpoint).digest('hex').slice(0, 16);

export async function listSubscriptions(store: Store): Promise<PushSubscriptionRecord[]> {
  const rows = await store.read((tx) =>
    tx.records.list<PushSubscriptionRecord>(PUSH_SUBSCRIPTIONS),
  );
  return rows.map((r) => r.value);
}

export async function saveSubscription(
  store: Store,
  sub: Omit<PushSubscriptionRecord, 'id' | 'createdAt'>,
  now = Date.now(),
): Promise<PushSubscriptionRecord> {
  const record = { ...sub, id: subscriptionId(sub.endpoint), createdAt: now };
  await store.transaction((tx) => tx.records.put(PUSH_SUBSCRIPTIONS, record.id, record), {
    isolation: 'keyed',
  });
  return record;
}

export const removeSubscription = (store: Store, id: string) =>
  store.transaction((tx) => tx.records.delete(PUSH_SUBSCRIPTIONS, id), { isolation: 'keyed' });

/** The JSON the service worker receives (and shows): nothing beyond the notice's words and link. */
export function pushPayload(notice: Notice): string {
  return JSON.stringify({
    title: notice.title,
    body: notice.text.replace(/[*`]/g, ''),
    url: notice.link,
    tag: `airlock-${notice.event}-${notice.about['approval'] ?? notice.about['job'] ?? notice.id}`,
  });
}

/** The VAPID `sub` claim: the UI's https address, or a contact address for a plain-http one. */
export const vapidSubject = (origin: string) =>
  origin.startsWith('https://') ? new URL(origin).origin : 'mailto:owner@airlock.invalid';

export interface PushRequest {
  endpoint: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer>;
}

/** The encrypted, signed request for one subscription (web-push does the RFC 8291/8292 work). */
export async function pushRequest(
  sub: PushSubscriptionRecord,
  payload: string,
  keys: VapidKeys,
  subject: string,
): Promise<PushRequest> {
  const details = (await webPush()).generateRequestDetails(
    { endpoint: sub.endpoint, keys: sub.keys },
    payload,
    {
      vapidDetails: { subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: PUSH_TTL_SECONDS,
      contentEncoding: 'aes128gcm',
      urgency: 'high',
    },
  );
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(details.headers)) headers[k] = String(v);
  return {
    endpoint: details.endpoint,
    method: details.method,
    headers,
    body: new Uint8Array(details.body as Buffer),
  };
}

/** Whether `endpoint` may receive pushes: the webhooks' address guard (destination.ts). */
export const refusedEndpoint = (endpoint: string, allowPrivate: readonly string[]) =>
  refusedDestination(endpoint, allowPrivate);

export interface PushSourceOptions {
  store: Store;
  /** The web UI's address: the VAPID subject when it is https. */
  origin: string;
  allowPrivate?: readonly string[] | undefined;
  timeoutMs?: number;
}

/** Every push subscription, as the notifier's destinations; 404/410 removes the subscription. */
export function pushSource(o: PushSourceOptions): DestinationSource {
  const timeoutMs = o.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return async () => {
    const subs = await listSubscriptions(o.store);
    if (subs.length === 0) return [];
    const keys = await vapidKeys(o.store);
    return subs.map((sub) => ({
      id: sub.id,
      label: new URL(sub.endpoint).origin,
      format: 'push' as const,
      person: true,
      async send(notice: Notice, signal: AbortSignal) {
        const refused = await refusedEndpoint(sub.endpoint, o.allowPrivate ?? []);
        if (refused) throw new Error(refused);
        const request = await pushRequest(sub, pushPayload(notice), keys, vapidSubject(o.origin));
        const response = await post(request.endpoint, request, signal, timeoutMs);
        if (response.status === 404 || response.status === 410) {
          await response.body?.cancel().catch(() => undefined);
          await removeSubscription(o.store, sub.id);
          throw new Error(
            `HTTP ${response.status}: the push service no longer knows this device; its subscription was removed`,
          );
        }
        await checkResponse(response);
      },
    }));
  };
}
