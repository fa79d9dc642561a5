/**
 * Webhook signatures (authority.md §6): `Airlock-Signature: t=<unix seconds>,v1=<hex>`
 * where v1 is HMAC-SHA256 with the webhook's secret over `t + "." + body` —
 * the Stripe shape. A receiver verifies with `verifyWebhook`, which also
 * refuses a timestamp outside the replay window (5 minutes either side).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Airlock-Signature';
/** How far a delivery's timestamp may be from the receiver's clock, in seconds. */
export const REPLAY_WINDOW_S = 5 * 60;

const mac = (secret: string, timestamp: number, body: string) =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

/** The header value for `body` sent at `timestamp` (unix seconds). */
export function signWebhook(secret: string, body: string, timestamp: number): string {
  return `t=${timestamp},v1=${mac(secret, timestamp, body)}`;
}

export type Verified = { ok: true; timestamp: number } | { ok: false; reason: string };

/**
 * Checks a delivery: the header names a timestamp within the replay window of
 * `nowS` and a v1 signature of `body` made with `secret`.
 */
export function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  body: string,
  options: { nowS?: number; windowS?: number } = {},
): Verified {
  if (!header) return { ok: false, reason: `no ${SIGNATURE_HEADER} header` };
  const parts = header.split(',').map((p) => p.trim().split('=', 2) as [string, string?]);
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const signatures = parts.filter(([k, v]) => k === 'v1' && v).map(([, v]) => v!);
  if (!Number.isInteger(t) || signatures.length === 0)
    return { ok: false, reason: `${SIGNATURE_HEADER} must read t=<seconds>,v1=<hex>` };
  const now = options.nowS ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.windowS ?? REPLAY_WINDOW_S))
    return { ok: false, reason: `timestamp ${t} is outside the replay window` };
  const expected = Buffer.from(mac(secret, t, body), 'hex');
  const matches = signatures.some((s) => {
    const given = Buffer.from(s, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true, timestamp: t } : { ok: false, reason: 'signature does not match' };
}
