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
import type { EventBus } from '../kernel/events/events.js';
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
import {
  effectiveSettings,
  inQuietHours,
  realTimers,
  type QuietHours,
  type Timers,
} from './quiet.js';

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
  /** No push or email between these hours but for urgent asks (quiet.ts). */
  quietHours?: QuietHours | undefined;
  /** One push/email per agent per this many seconds, with a count (default 60; 0 = off). */
  batchSeconds?: number | undefined;
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
  /** `skipped`: held back by quiet hours (`error` says so); never sent. */
  status: 'sending' | 'delivered' | 'failed' | 'skipped';
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
  /** Read by a person (push, email): quiet hours and batching apply. */
  person?: boolean;
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
  /** Whether an ask was made by a rule marked `urgent` (it passes quiet hours). */
  urgent?: (notice: Notice) => Promise<boolean> | boolean;
  /** The batching's timers (default real ones). */
  timers?: Timers;
}

export interface Notifier {
  /** Every place a notice can go now: the webhooks, the push devices, the email recipients. */
  destinations(): Promise<Array<Pick<Destination, 'id' | 'label' | 'format'>>>;
  /**
   * Sends a test notice to one destination through its real path (render,
   * signature, address guard, encryption), once, without retries; throws
   * `Error` with the reason when it fails, null when there is no such one.
   */
  test(id: string): Promise<true | null>;
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

/** A webhook as a destination: rendered, signed, address-guarded, POSTed. */
function webhookDestinationOf(
  hook: WebhookConfig,
  config: NotifyConfig,
  now: () => number,
  timeoutMs: number,
): Destination {
  return {
    id: hookKey(hook),
    label: new URL(hook.url).origin,
    format: hook.format ?? 'json',
    async send(notice, signal) {
      const refused = await refusedDestination(hook.url, config.allowPrivate ?? []);
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
  };
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
    inbox: () => `${o.origin}/#/approvals`,
  };

  const webhookDestination = (hook: WebhookConfig) =>
    webhookDestinationOf(hook, o.config, now, timeoutMs);
  const webhooks: DestinationSource = (notice) =>
    hooks
      .filter((hook) => !hook.events || hook.events.includes(notice.event))
      .map(webhookDestination);
  const sources = [webhooks, ...(o.sources ?? [])];

  const { deliver, claim, deliveryOf } = deliveries({
    store: o.store,
    logger: o.logger,
    now,
    delays,
    stop,
  });

  function track(work: Promise<void>): void {
    const running = work.catch((err: unknown) =>
      o.logger.error({ err }, 'notification delivery could not be recorded'),
    );
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
  }

  const unsubscribe = o.events.subscribe(
    ({ id, at, data }) => {
      if (!(NOTIFY_EVENTS as readonly string[]).includes(data.event)) return;
      const notice = noticeOf(id, at, data, links);
      if (!notice) return;
      track(fanOut(notice));
    },
    { events: NOTIFY_EVENTS },
  );

  const destinationsOf = async (notice: Notice) =>
    (await Promise.all(sources.map((source) => source(notice)))).flat();
  const gate = personGate({
    store: o.store,
    config: o.config,
    now,
    timers: o.timers ?? realTimers,
    urgent: o.urgent ?? (() => false),
    inbox: links.inbox(),
    track,
    async send(notice) {
      const people = (await destinationsOf(notice)).filter((to) => to.person);
      await Promise.all(people.map((to) => deliver(to, notice)));
    },
    async skip(notice, why) {
      const people = (await destinationsOf(notice)).filter((to) => to.person);
      await Promise.all(
        people.map((to) =>
          claim(deliveryKey(notice.id, to.id), {
            ...deliveryOf(notice, to),
            status: 'skipped',
            error: why,
          }),
        ),
      );
    },
  });

  async function fanOut(notice: Notice): Promise<void> {
    // Decided in the order of the events (the batch's first ask goes out first).
    const people = gate.route(notice);
    const machines = (await destinationsOf(notice)).filter((to) => !to.person);
    await Promise.all([...machines.map((to) => deliver(to, notice)), people]);
  }

  const testNotice = (): Notice => ({
    id: 0,
    event: 'approvalRequested',
    at: now(),
    title: 'Airlock: test notification',
    text: 'A test from *Airlock*: notifications reach you here',
    link: links.inbox(),
    about: {},
  });
  const everyDestination = async () => {
    const notice = testNotice();
    const others = (await Promise.all((o.sources ?? []).map((source) => source(notice)))).flat();
    return { notice, all: [...hooks.map(webhookDestination), ...others] };
  };

  return {
    async destinations() {
      const { all } = await everyDestination();
      return all.map(({ id, label, format }) => ({ id, label, format }));
    },
    async test(id) {
      const { notice, all } = await everyDestination();
      const to = all.find((d) => d.id === id);
      if (!to) return null;
      await to.send(notice, stop.signal);
      return true;
    },
    async idle() {
      while (inFlight.size > 0) await Promise.all([...inFlight]);
    },
    async close() {
      unsubscribe();
      gate.close();
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

/** How many deliveries the store keeps: the oldest beyond these are swept. */
export const DELIVERIES_KEPT = 1_000;
/** A delivery younger than this is never swept (another instance may still claim its event). */
const SWEEP_AFTER_MS = 60 * 60 * 1000;
/** Every this many claims, the oldest deliveries are swept. */
const SWEEP_EVERY = 100;

/**
 * Deletes the oldest deliveries beyond `keep` that have ended (delivered,
 * failed or skipped) and are older than an hour: the list stays bounded
 * however long the server runs. Returns how many went.
 */
export async function sweepDeliveries(
  store: Store,
  now: number,
  keep = DELIVERIES_KEPT,
): Promise<number> {
  const rows = await store.read((tx) => tx.records.list<Delivery>(DELIVERIES));
  const old = rows
    .slice(0, Math.max(0, rows.length - keep))
    .filter((r) => r.value.status !== 'sending' && now - r.value.createdAt > SWEEP_AFTER_MS);
  for (const r of old)
    await store.transaction((tx) => tx.records.delete(DELIVERIES, r.key), { isolation: 'keyed' });
  return old.length;
}

/** Keyed delivery records, and the tries of one delivery with their waits. */
function deliveries(o: {
  store: Store;
  logger: Logger;
  now: () => number;
  delays: number[];
  stop: AbortController;
}) {
  const { now, delays, stop } = o;
  const save = (key: string, delivery: Delivery) =>
    o.store.transaction((tx) => tx.records.put(DELIVERIES, key, delivery), { isolation: 'keyed' });

  let claims = 0;
  /** True for the one instance that inserts the delivery record first. */
  const claim = async (key: string, delivery: Delivery) => {
    const mine = await o.store.transaction(
      async (tx) => {
        if (await tx.records.get(DELIVERIES, key)) return false;
        await tx.records.put(DELIVERIES, key, delivery);
        return true;
      },
      { isolation: 'keyed' },
    );
    if (mine && ++claims % SWEEP_EVERY === 0)
      await sweepDeliveries(o.store, now()).catch((err: unknown) =>
        o.logger.warn({ err }, 'old notification deliveries could not be swept'),
      );
    return mine;
  };

  const deliveryOf = (notice: Notice, to: Destination): Delivery => ({
    eventId: notice.id,
    event: notice.event,
    webhook: to.label,
    format: to.format,
    status: 'sending',
    attempts: 0,
    error: null,
    createdAt: now(),
    updatedAt: now(),
  });

  async function deliver(to: Destination, notice: Notice): Promise<void> {
    const key = deliveryKey(notice.id, to.id);
    const delivery = deliveryOf(notice, to);
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

  return { deliver, claim, deliveryOf };
}

interface GateOptions {
  store: Store;
  config: NotifyConfig;
  now: () => number;
  timers: Timers;
  urgent: (notice: Notice) => Promise<boolean> | boolean;
  /** The inbox's link: where a batch's notification leads. */
  inbox: string;
  track(work: Promise<void>): void;
  /** Delivers to every person's destination (push, email). */
  send(notice: Notice): Promise<void>;
  /** Records it `skipped` for every person's destination. */
  skip(notice: Notice, why: string): Promise<void>;
}

interface Batch {
  /** The window's start, in event time (the shared log's stamp): the same on every instance. */
  start: number;
  seconds: number;
  count: number;
  last: Notice | null;
  cancel(): void;
}

/** Where each agent's last summarised window is recorded, so one instance sends its summary. */
export const BATCH_WINDOWS = 'notify-batch-windows';
/**
 * How long after a window ends its summary waits for asks still on their way
 * to this instance (the bus's lag): every instance then counts the same asks.
 */
export const BATCH_GRACE_MS = 2_000;

/**
 * Quiet hours and batching (quiet.ts) in front of the push and email
 * destinations. Every instance hears every event and batches them the same
 * way: windows are cut by the events' own time (`at`, stamped by the shared
 * log), not by when an instance heard them, and the one instance that
 * records a window in the store sends its summary — at most one notification
 * per agent per window across instances.
 */
function personGate(g: GateOptions) {
  const batches = new Map<string, Batch>();
  const quietWhy = (from: string, to: string) =>
    `quiet hours (${from}–${to}): not sent; the inbox has it`;

  const open = (agent: string, start: number, seconds: number) => {
    const batch: Batch = { start, seconds, count: 0, last: null, cancel: () => undefined };
    batches.set(agent, batch);
    batch.cancel = g.timers.set(() => roll(agent), seconds * 1000 + BATCH_GRACE_MS);
  };

  /** Ends the agent's window: its summary goes out, and the next window follows it at once. */
  function roll(agent: string): void {
    const batch = batches.get(agent);
    if (!batch) return;
    batch.cancel();
    batches.delete(agent);
    if (!batch.last || batch.count === 0) return;
    // Still at most one notification per agent per window.
    open(agent, batch.start + batch.seconds * 1000, batch.seconds);
    g.track(summarise(agent, batch, batch.last));
  }

  /** True for the one instance that records this window first. */
  const claimWindow = (agent: string, start: number) =>
    g.store.transaction(
      async (tx) => {
        const seen = await tx.records.get<{ start: number }>(BATCH_WINDOWS, agent);
        if (seen && seen.value.start >= start) return false;
        await tx.records.put(BATCH_WINDOWS, agent, { start });
        return true;
      },
      { isolation: 'keyed' },
    );

  async function summarise(agent: string, batch: Batch, last: Notice): Promise<void> {
    if (!(await claimWindow(agent, batch.start))) return;
    const settings = await effectiveSettings(g.store, g.config);
    const summary: Notice = {
      ...last,
      title: 'Airlock: approvals requested',
      text: `*${agent}* asked ${batch.count} ${batch.count === 1 ? 'time' : 'times'}`,
      link: g.inbox,
      about: { agent, count: String(batch.count) },
    };
    const quiet = settings.quietHours;
    if (quiet && inQuietHours(quiet, g.now()))
      await g.skip(summary, quietWhy(quiet.from, quiet.to));
    else await g.send(summary);
  }

  /** What to do with a notice, decided one at a time in the events' order. */
  async function decide(notice: Notice): Promise<() => Promise<void>> {
    const settings = await effectiveSettings(g.store, g.config);
    const urgent = notice.event === 'approvalRequested' && (await g.urgent(notice));
    const quiet = settings.quietHours;
    if (!urgent && quiet && inQuietHours(quiet, g.now()))
      return () => g.skip(notice, quietWhy(quiet.from, quiet.to));
    if (notice.event !== 'approvalRequested' || urgent || settings.batchSeconds === 0)
      return () => g.send(notice);
    const agent = notice.about['agent'] ?? 'a client';
    // An ask later than its window (heard late here): that window ends first.
    for (let b = batches.get(agent); b && notice.at >= b.start + b.seconds * 1000;) {
      roll(agent);
      b = batches.get(agent);
    }
    const batch = batches.get(agent);
    if (batch) {
      batch.count++;
      batch.last = notice;
      return async () => undefined;
    }
    open(agent, notice.at, settings.batchSeconds);
    return () => g.send(notice);
  }

  let queue: Promise<unknown> = Promise.resolve();
  return {
    /** Decides at once in order (call it as the event arrives); resolves when sent. */
    route(notice: Notice): Promise<void> {
      const decided = queue.then(() => decide(notice));
      queue = decided.catch(() => undefined);
      return decided.then((act) => act());
    },
    close() {
      for (const batch of batches.values()) batch.cancel();
      batches.clear();
    },
  };
}
