/**
 * Quiet hours and batching for the notifications a person reads — Web Push
 * and email (authority.md §6.3, issue 30). Webhooks are for machines: they
 * get every event at once, quiet hours or not.
 *
 * - Quiet hours `{from: "22:00", to: "07:00", timeZone?}`: nothing is pushed
 *   or mailed between them (a window may cross midnight), except an ask made
 *   by a policy rule with `urgent: true`. What is held back is not sent later;
 *   the inbox still has it.
 * - Batching `batchSeconds` (default 60, 0 = off): the first ask of an agent
 *   goes out at once; the agent's further asks within the next `batchSeconds`
 *   are counted and then sent as one notification ("*default* asked 3 times").
 *
 * The owner's setting (Settings → Notifications, `PUT /api/v1/notify/settings`,
 * kept in the store) overrides the config file's `notify.quietHours` and
 * `notify.batchSeconds`.
 */
import { z } from 'zod';
import type { Store } from '../kernel/store.js';

export const DEFAULT_BATCH_SECONDS = 60;
export const NOTIFY_SETTINGS = 'notify-settings';

const clock = z
  .string()
  .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'is a time of day, "HH:MM" (24 h)');

const knownTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

export const QuietHoursSchema = z
  .object({
    from: clock,
    to: clock,
    /** An IANA time zone (`Europe/Berlin`); default the server's. */
    timeZone: z
      .string()
      .refine(knownTimeZone, 'is not an IANA time zone such as "Europe/Berlin"')
      .optional(),
  })
  .strict()
  .refine((q) => q.from !== q.to, '`from` and `to` must differ');
export type QuietHours = z.infer<typeof QuietHoursSchema>;

export const BatchSecondsSchema = z.number().int().min(0).max(3600);

/** What the owner sets in Settings: both fields, `quietHours: null` for none. */
export const NotifySettingsSchema = z
  .object({
    quietHours: QuietHoursSchema.nullable(),
    batchSeconds: BatchSecondsSchema,
  })
  .strict();
export type NotifySettings = z.infer<typeof NotifySettingsSchema>;

/** The minutes since midnight of `at` in `timeZone` (default the server's). */
function minuteOfDay(at: number, timeZone: string | undefined): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    ...(timeZone ? { timeZone } : {}),
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return part('hour') * 60 + part('minute');
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Whether `at` falls in the quiet hours (`from` included, `to` not); a window may cross midnight. */
export function inQuietHours(quiet: QuietHours | null | undefined, at: number): boolean {
  if (!quiet) return false;
  const m = minuteOfDay(at, quiet.timeZone);
  const from = minutes(quiet.from);
  const to = minutes(quiet.to);
  return from < to ? m >= from && m < to : m >= from || m < to;
}

/** The owner's setting from the store, or null when the config file's stands. */
export async function ownerSettings(store: Store): Promise<NotifySettings | null> {
  const kept = await store.read((tx) => tx.records.get<NotifySettings>(NOTIFY_SETTINGS, 'owner'));
  return kept?.value ?? null;
}

export const saveOwnerSettings = (store: Store, settings: NotifySettings) =>
  store.transaction((tx) => tx.records.put(NOTIFY_SETTINGS, 'owner', settings), {
    isolation: 'keyed',
  });

export const clearOwnerSettings = (store: Store) =>
  store.transaction((tx) => tx.records.delete(NOTIFY_SETTINGS, 'owner'), { isolation: 'keyed' });

/** The settings in force: the owner's, else the config file's, else none and 60 s. */
export async function effectiveSettings(
  store: Store,
  config: { quietHours?: QuietHours | undefined; batchSeconds?: number | undefined },
): Promise<NotifySettings & { source: 'owner' | 'config' }> {
  const owner = await ownerSettings(store);
  if (owner) return { ...owner, source: 'owner' };
  return {
    quietHours: config.quietHours ?? null,
    batchSeconds: config.batchSeconds ?? DEFAULT_BATCH_SECONDS,
    source: 'config',
  };
}

/** Timers the batching uses; tests pass their own. */
export interface Timers {
  /** Calls `fn` after `ms`; the answer cancels it. */
  set(fn: () => void, ms: number): () => void;
}

export const realTimers: Timers = {
  set(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
};
