/**
 * Webhooks for the owner (authority.md §6): every event a webhook asks for
 * (a new ask or consent request, a failed job) is POSTed to its URL in its
 * format, signed when it has a secret (signature.ts), to public addresses
 * only (destination.ts). A 5xx answer, a timeout or a network error is
 * retried with growing delays; after the last try the delivery is marked
 * `failed`. Every delivery is a record in the store (`notify-deliveries`,
 * listed by `GET /api/v1/notify/deliveries`).
 *
 * Scale-out: every instance hears every event, and the event log numbers
 * them the same everywhere; the instance whose keyed insert of the delivery
 * record (event id, webhook) comes first delivers it, the others skip it.
 */
import { createHash } from 'node:crypto';
import type { EventBus } from '../kernel/events.js';
import type { Logger } from '../kernel/logger.js';
import type { Store } from '../kernel/store.js';
import { refusedDestination } from './destination.js';
import {
  NOTIFY_EVENTS,
  noticeOf,
  render,
  type Notice,
  type NotifyEventName,
  type WebhookFormat,
} from './formats.js';
import { SIGNATURE_HEADER, signWebhook } from './signature.js';
import type { SmtpConfig } from './email.js';

export interface WebhookConfig {
  url: string;
  /** Default: every event. */
  events?: NotifyEventName[] | undefined;
  /** Signs every delivery (`Airlock-Signature`) when set. */
  secret?: string | undefined;
  /** Default `json`. */
  format?: WebhookFormat | undefined;
}

export interface NotifyConfig {
  webhooks?: WebhookConfig[] | undefined;
  /** URL prefixes allowed although they are private or loopback addresses. */
  allowPrivate?: string[] | undefined;
  /** Email (email.ts). */
  smtp?: SmtpConfig | undefined;
}

/** The store collection of deliveries, keyed by event id and webhook. */
export const DELIVERIES = 'notify-deliveries';
/** Waits between tries: four tries over about half a minute. */
export const RETRY_DELAYS_MS = [1_000, 5_000, 30_000];
export const DELIVERY_TIMEOUT_MS = 10_000;

/** How a delivery went out: a webhook's format, a Web Push or an email. */
export type DeliveryFormat = WebhookFormat | 'push' | 'email';

export interface Delivery {
  eventId: number;
  event: NotifyEventName;
  /**
   * Where it went: a webhook's or push service's origin only (a URL's path or
   * query may itself be a secret — Slack's are), or the email's recipients.
   */
  webhook: string;
  format: DeliveryFormat;
  status: 'sending' | 'delivered' | 'failed';
  attempts: number;
  /** Why the last try failed. */
  error: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The first webhook URL that may not be used and why, or null when all may. */
export async function refusedWebhook(config: NotifyConfig): Promise<string | null> {
  for (const hook of config.webhooks ?? []) {
    const refused = await refusedDestination(hook.url, config.allowPrivate ?? []);
    if (refused) return `notify.webhooks: ${hook.url} is refused: ${refused}`;
  }
  return null;
}

/** One place a notice goes: a webhook, a push subscription, the email recipients. */
export interface Destination {
  /** Stable among destinations: with the event id, the delivery's key. */
  id: string;
  /** Shown in the deliveries (`webhook`). */
  label: string;
  format: DeliveryFormat;
  /** Throws `Retryable` for a 5xx, 429, timeout or network error; any other error fails at once. */
  send(notice: Notice, signal: AbortSignal): Promise<void>;
}

/** The destinations of a notice (the webhooks asking for its event; every push subscription; …). */
export type DestinationSource = (notice: Notice) => Promise<Destination[]> | Destination[];

export interface NotifierOptions {
  store: Store;
  events: EventBus;
  logger: Logger;
  config: NotifyConfig;
  /** The web UI's address (`https://host[/path]`): cards are linked there. */
  origin: string;
  retryDelaysMs?: number[];
  timeoutMs?: number;
  now?: () => number;
  /** Destinations besides the configured webhooks (push, email). */
  sources?: DestinationSource[];
}

export interface Notifier {
  /** Resolves when no delivery is in progress here. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const hookKey = (hook: WebhookConfig) =>
  createHash('sha256')
    .update(`${hook.format ?? 'json'} ${hook.url}`)
    .digest('hex')
    .slice(0, 12);

const deliveryKey = (eventId: number, destination: string) =>
  `${String(eventId).padStart(16, '0')}:${destination}`;

/** A failure worth another try later. */
export class Retryable extends Error {}

/** Fails a response the way every HTTP destination does: 5xx/429 retried, other non-2xx not. */
export async function checkResponse(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
  if (response.status >= 500 || response.status === 429)
    throw new Retryable(`HTTP ${response.status}`);
  if (response.status >= 300) throw new Error(`HTTP ${response.status}`);
}

/** `fetch` with a deadline, an abort and no redirects; network errors and timeouts are retryable. */
export async function post(
  url: string,
  init: { headers: Record<string, string>; body: string | Uint8Array<ArrayBuffer> },
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Response> {
  try {
    return await fetch(url, {
      method: 'POST',
      headers: init.headers,
      body: init.body,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (error) {
    const e = error as Error;
    throw new Retryable(e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : e.message);
  }
}

export function startNotifier(o: NotifierOptions): Notifier {
  const hooks = o.config.webhooks ?? [];
  const now = o.now ?? Date.now;
  const delays = o.retryDelaysMs ?? RETRY_DELAYS_MS;
  const timeoutMs = o.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const stop = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const links = {
    approval: (id: string) => `${o.origin}/#/approvals/${encodeURIComponent(id)}`,
    jobs: () => `${o.origin}/#/jobs`,
  };

  const save = (key: string, delivery: Delivery) =>
    o.store.transaction((tx) => tx.records.put(DELIVERIES, key, delivery), { isolation: 'keyed' });

  /** True for the one instance that inserts the delivery record first. */
  const claim = (key: string, delivery: Delivery) =>
    o.store.transaction(
      async (tx) => {
        if (await tx.records.get(DELIVERIES, key)) return false;
        await tx.records.put(DELIVERIES, key, delivery);
        return true;
      },
      { isolation: 'keyed' },
    );

  const webhookDestination = (hook: WebhookConfig): Destination => ({
    id: hookKey(hook),
    label: new URL(hook.url).origin,
    format: hook.format ?? 'json',
    async send(notice, signal) {
      const refused = await refusedDestination(hook.url, o.config.allowPrivate ?? []);
      if (refused) throw new Error(refused);
      const { headers, body } = render(notice, hook.format ?? 'json');
      const signed: Record<string, string> = hook.secret
        ? { [SIGNATURE_HEADER]: signWebhook(hook.secret, body, Math.floor(now() / 1000)) }
        : {};
      const response = await post(
        hook.url,
        { headers: { ...headers, ...signed, 'user-agent': 'Airlock-Webhook' }, body },
        signal,
        timeoutMs,
      );
      await checkResponse(response);
    },
  });
  const webhooks: DestinationSource = (notice) =>
    hooks
      .filter((hook) => !hook.events || hook.events.includes(notice.event))
      .map(webhookDestination);
  const sources = [webhooks, ...(o.sources ?? [])];

  async function deliver(to: Destination, notice: Notice): Promise<void> {
    const key = deliveryKey(notice.id, to.id);
    const delivery: Delivery = {
      eventId: notice.id,
      event: notice.event,
      webhook: to.label,
      format: to.format,
      status: 'sending',
      attempts: 0,
      error: null,
      createdAt: now(),
      updatedAt: now(),
    };
    if (!(await claim(key, delivery))) return;
    for (let attempt = 0; ; attempt++) {
      delivery.attempts = attempt + 1;
      try {
        await to.send(notice, stop.signal);
        await save(key, { ...delivery, status: 'delivered', error: null, updatedAt: now() });
        return;
      } catch (error) {
        delivery.error = (error as Error).message;
        if (stop.signal.aborted) return;
        if (!(error instanceof Retryable) || attempt >= delays.length) {
          o.logger.warn(
            { webhook: delivery.webhook, eventId: notice.id, error: delivery.error },
            'notification delivery failed',
          );
          await save(key, { ...delivery, status: 'failed', updatedAt: now() });
          return;
        }
        await save(key, { ...delivery, updatedAt: now() });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delays[attempt]);
          stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), {
            once: true,
          });
        });
        if (stop.signal.aborted) return;
      }
    }
  }

  const unsubscribe = o.events.subscribe(
    ({ id, at, data }) => {
      if (!(NOTIFY_EVENTS as readonly string[]).includes(data.event)) return;
      const notice = noticeOf(id, at, data, links);
      if (!notice) return;
      const running = fanOut(notice).catch((err: unknown) =>
        o.logger.error({ err, eventId: id }, 'notification delivery could not be recorded'),
      );
      inFlight.add(running);
      void running.finally(() => inFlight.delete(running));
    },
    { events: NOTIFY_EVENTS },
  );

  async function fanOut(notice: Notice): Promise<void> {
    const all = (await Promise.all(sources.map((source) => source(notice)))).flat();
    await Promise.all(all.map((to) => deliver(to, notice)));
  }

  return {
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async close() {
      unsubscribe();
      stop.abort();
      await this.idle();
    },
  };
}

/** Deliveries, newest first. */
export async function listDeliveries(store: Store, limit = 200): Promise<Delivery[]> {
  const rows = await store.read((tx) => tx.records.list<Delivery>(DELIVERIES));
  return rows
    .map((r) => r.value)
    .reverse()
    .slice(0, limit);
}
