/**
 * Web Push (authority.md §6, issue 30): a push service double on loopback
 * holds a browser's subscription keys, checks each request's VAPID JWT
 * (RFC 8292, ES256 over the service's origin) and decrypts its body per
 * RFC 8291 (`aes128gcm`) with Node's own crypto — not with web-push.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createECDH,
  createDecipheriv,
  createPublicKey,
  hkdfSync,
  randomBytes,
  verify,
} from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import {
  BATCH_GRACE_MS,
  listDeliveries,
  startNotifier,
  type Notifier,
  type NotifierOptions,
} from '../../src/notify/webhooks.js';
import { inQuietHours, type Timers } from '../../src/notify/quiet.js';
import {
  listSubscriptions,
  pushSource,
  saveSubscription,
  vapidKeys,
} from '../../src/notify/push.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { waitFor } from '../helpers/wait.js';

const ORIGIN = 'https://airlock.example';
const b64u = (b: Buffer) => b.toString('base64url');

/** RFC 8291 §3.4 / RFC 8188: the plaintext of an `aes128gcm` body for the holder of `ua`'s keys. */
function decrypt(body: Buffer, uaPrivate: ReturnType<typeof createECDH>, auth: Buffer): string {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  expect(idlen).toBe(65);
  expect(ciphertext.length).toBeLessThanOrEqual(rs);
  const uaPublic = uaPrivate.getPublicKey();
  const ecdhSecret = uaPrivate.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, auth, keyInfo, 32));
  const cek = Buffer.from(
    hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16),
  );
  const nonce = Buffer.from(
    hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12),
  );
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(-16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()]);
  // The last record ends with the delimiter 0x02 and zero or more zero bytes.
  let end = padded.length - 1;
  while (padded[end] === 0) end--;
  expect(padded[end]).toBe(2);
  return padded.subarray(0, end).toString('utf8');
}

/** RFC 8292: `Authorization: vapid t=<JWT>, k=<public key>`; the JWT is ES256 by `k` for this origin. */
function checkVapid(headers: IncomingHttpHeaders, audience: string, publicKey: string) {
  const m = /^vapid t=([^,]+), k=(.+)$/.exec(String(headers.authorization));
  if (!m) throw new Error(`no VAPID authorization: ${headers.authorization}`);
  const [, jwt, k] = m;
  expect(k).toBe(publicKey);
  const [h, p, sig] = jwt!.split('.');
  const raw = Buffer.from(k!, 'base64url');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33, 65)) },
    format: 'jwk',
  });
  const ok = verify(
    'sha256',
    Buffer.from(`${h}.${p}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(sig!, 'base64url'),
  );
  expect(ok).toBe(true);
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
  expect(claims.aud).toBe(audience);
  expect(claims.exp).toBeGreaterThan(Date.now() / 1000);
}

/** A push service on loopback holding one browser's subscription. */
async function pushService(statuses: number[] = []) {
  const ua = createECDH('prime256v1');
  ua.generateKeys();
  const auth = randomBytes(16);
  const received: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(statuses.shift() ?? 201).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    subscription: {
      endpoint: `${origin}/push/${b64u(randomBytes(8))}`,
      keys: { p256dh: b64u(ua.getPublicKey()), auth: b64u(auth) },
    },
    open: (i: number) => decrypt(received[i]!.body, ua, auth),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const ask = (id = 'apr_1', agent = 'default', rule = 'deletes') => ({
  event: 'approvalRequested',
  approval: {
    id,
    kind: 'policy',
    agent,
    door: 'fs',
    tool: 'delete_file',
    capability: 'policy',
    rule,
    preview: { path: '/home/owner/SECRET-PATH.txt', content: 'ARGUMENT-VALUE' },
    summary: 'delete /home/owner/SECRET-PATH.txt',
    arguments: { path: '/home/owner/SECRET-PATH.txt' },
  },
});

let dir: string;
let store: Store;
let events: EventBus;
let closers: (() => Promise<void>)[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-push-'));
  ({ store } = await openStore({ data: dir }));
  events = await createEventBus();
  closers = [];
});

afterEach(async () => {
  for (const c of closers.reverse()) await c();
  await events.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function notifierFor(
  service: { origin: string },
  extra: Partial<NotifierOptions> = {},
): Promise<Notifier> {
  const n = startNotifier({
    store,
    events,
    logger: silentLogger,
    origin: ORIGIN,
    config: {},
    retryDelaysMs: [10, 20],
    sources: [pushSource({ store, origin: ORIGIN, allowPrivate: [`${service.origin}/`] })],
    ...extra,
  });
  closers.push(() => n.close());
  return n;
}

describe('Web Push', () => {
  it('sends one encrypted, VAPID-signed notification per new ask, with the card link and no argument values', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'phone' });
    // Batching off: each ask is its own push.
    const notifier = await notifierFor(svc, { config: { batchSeconds: 0 } });
    events.publish(ask('apr_1'));
    events.publish(ask('apr_2'));
    await waitFor(() => svc.received.length === 2);
    await notifier.idle();
    const keys = await vapidKeys(store);
    const payloads = svc.received.map((r, i) => {
      expect(r.headers['content-encoding']).toBe('aes128gcm');
      expect(Number(r.headers.ttl)).toBeGreaterThan(0);
      checkVapid(r.headers, svc.origin, keys.publicKey);
      expect(r.body.toString('latin1')).not.toContain('delete_file');
      return JSON.parse(svc.open(i));
    });
    const first = payloads.find((p) => p.url.endsWith('apr_1'));
    expect(first).toEqual({
      title: 'Airlock: approval requested',
      body: 'default asks to call delete_file on fs',
      url: `${ORIGIN}/#/approvals/apr_1`,
      tag: 'airlock-approvalRequested-apr_1',
    });
    for (const p of payloads) {
      const text = JSON.stringify(p);
      expect(text).not.toContain('ARGUMENT-VALUE');
      expect(text).not.toContain('SECRET-PATH');
    }
    // Nothing else was pushed (one per ask), and each is a delivery the owner can see.
    expect(svc.received).toHaveLength(2);
    const deliveries = await listDeliveries(store);
    expect(deliveries.map((d) => [d.format, d.status, d.webhook])).toEqual([
      ['push', 'delivered', svc.origin],
      ['push', 'delivered', svc.origin],
    ]);
  });

  it('removes a subscription after a 410 from the push service', async () => {
    const svc = await pushService([410]);
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'old laptop' });
    const notifier = await notifierFor(svc);
    events.publish(ask());
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'failed');
    await notifier.idle();
    expect(await listSubscriptions(store)).toEqual([]);
    expect((await listDeliveries(store))[0]!.error).toMatch(/410.*removed/);
    events.publish(ask('apr_next'));
    await notifier.idle();
    expect(svc.received).toHaveLength(1);
  });

  it('a push to a private address not listed in notify.allowPrivate is refused', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'probe' });
    const n = startNotifier({
      store,
      events,
      logger: silentLogger,
      origin: ORIGIN,
      config: {},
      sources: [pushSource({ store, origin: ORIGIN })],
    });
    closers.push(() => n.close());
    events.publish(ask());
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'failed');
    expect(svc.received).toHaveLength(0);
    expect((await listDeliveries(store))[0]!.error).toMatch(/notify\.allowPrivate/);
  });

  it('keeps one VAPID key pair in the store, the same for every instance', async () => {
    const [a, b] = await Promise.all([vapidKeys(store), vapidKeys(store)]);
    expect(a).toEqual(b);
    await store.close();
    ({ store } = await openStore({ data: dir }));
    expect(await vapidKeys(store)).toEqual(a);
  });
});

describe('push subscription routes', () => {
  let tk: TestKernel;
  let app: HttpApp;
  let base: string;
  beforeEach(async () => {
    tk = await testKernel([], { dir: mkdtempSync(join(tmpdir(), 'airlock-push-app-')) });
    app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
    base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}/api/v1/notify/push`;
    closers.push(
      () => app.close(),
      () => tk.close(),
    );
  });
  const sub = {
    endpoint: 'https://push.example/send/abc',
    keys: { p256dh: 'BPub', auth: 'c2VjcmV0' },
    device: 'phone',
  };

  it('an agent cannot subscribe a device, list devices or read the key: notifications stay the owner’s', async () => {
    const alice = {
      ...(await agentHeaders(tk.kernel, 'alice')),
      'content-type': 'application/json',
    };
    const post = await fetch(`${base}/subscriptions`, {
      method: 'POST',
      headers: alice,
      body: JSON.stringify({ ...sub, endpoint: 'https://attacker.example/send/x' }),
    });
    expect(post.status).toBe(403);
    expect((await fetch(`${base}/subscriptions`, { headers: alice })).status).toBe(403);
    expect((await fetch(`${base}/key`, { headers: alice })).status).toBe(403);
    expect(await listSubscriptions(tk.kernel.store)).toEqual([]);
  });

  it('the owner subscribes, lists and removes a device; the keys are never listed', async () => {
    const owner = { ...(await ownerHeaders(tk.kernel)), 'content-type': 'application/json' };
    const key = await (await fetch(`${base}/key`, { headers: owner })).json();
    expect(key.publicKey).toBe((await vapidKeys(tk.kernel.store)).publicKey);
    const made = await fetch(`${base}/subscriptions`, {
      method: 'POST',
      headers: owner,
      body: JSON.stringify(sub),
    });
    expect(made.status).toBe(201);
    const { subscription } = await made.json();
    const listed = await (await fetch(`${base}/subscriptions`, { headers: owner })).json();
    expect(listed.subscriptions).toEqual([
      {
        id: subscription.id,
        device: 'phone',
        service: 'https://push.example',
        createdAt: expect.any(Number),
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain('c2VjcmV0');
    const bad = await fetch(`${base}/subscriptions`, {
      method: 'POST',
      headers: owner,
      body: JSON.stringify({ ...sub, endpoint: 'file:///etc/passwd' }),
    });
    expect(bad.status).toBe(400);
    const gone = await fetch(`${base}/subscriptions/${subscription.id}`, {
      method: 'DELETE',
      headers: owner,
    });
    expect(gone.status).toBe(200);
    expect(await listSubscriptions(tk.kernel.store)).toEqual([]);
  });
});

describe('the installable UI', () => {
  it('serves the service worker at the root scope and the manifest, both linked from the page', async () => {
    const { createWebUi } = await import('../../src/web/web-ui.js');
    const tk = await testKernel([], { dir: mkdtempSync(join(tmpdir(), 'airlock-push-ui-')) });
    const app = createHttpApp({
      kernel: tk.kernel,
      logger: silentLogger,
      staticHandler: createWebUi(),
    });
    closers.push(
      () => app.close(),
      () => tk.close(),
    );
    const base = `http://localhost:${(await app.listen(0, '127.0.0.1')).port}`;
    const sw = await fetch(`${base}/sw.js`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
    const source = await sw.text();
    expect(source).toContain("addEventListener('push'");
    expect(source).toContain('wanted.origin === self.location.origin');
    const manifest = await (await fetch(`${base}/manifest.webmanifest`)).json();
    expect(manifest).toMatchObject({ name: 'Airlock', start_url: '/', display: 'standalone' });
    expect(await (await fetch(`${base}/`)).text()).toContain(
      '<link rel="manifest" href="/manifest.webmanifest">',
    );
  });
});

/** Timers the test fires by hand: no sleeping for a batch's minute. */
function manualTimers() {
  const pending: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  const timers: Timers = {
    set(fn, ms) {
      const t = { fn, ms, cancelled: false };
      pending.push(t);
      return () => (t.cancelled = true);
    },
  };
  const fire = () => {
    const due = pending.splice(0).filter((t) => !t.cancelled);
    for (const t of due) t.fn();
    return due.map((t) => t.ms);
  };
  return { timers, fire, pending };
}

/** A webhook receiver on loopback that only counts. */
async function hookReceiver() {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => (bodies.push(body), res.writeHead(200).end()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url, bodies };
}

// 23:30 UTC on 4 December 2026; quiet from 22:00 to 07:00 UTC.
const NIGHT = Date.UTC(2026, 11, 4, 23, 30);
const NOON = Date.UTC(2026, 11, 4, 12, 0);
const QUIET = { from: '22:00', to: '07:00', timeZone: 'UTC' };

describe('quiet hours and batching', () => {
  it('quiet hours cross midnight and follow the time zone', () => {
    expect(inQuietHours(QUIET, NIGHT)).toBe(true);
    expect(inQuietHours(QUIET, Date.UTC(2026, 11, 5, 6, 59))).toBe(true);
    expect(inQuietHours(QUIET, Date.UTC(2026, 11, 5, 7, 0))).toBe(false);
    expect(inQuietHours(QUIET, NOON)).toBe(false);
    // 12:00 UTC is 21:00 in Tokyo: not quiet; 13:00 UTC is 22:00 there: quiet.
    const tokyo = { ...QUIET, timeZone: 'Asia/Tokyo' };
    expect(inQuietHours(tokyo, NOON)).toBe(false);
    expect(inQuietHours(tokyo, Date.UTC(2026, 11, 4, 13, 0))).toBe(true);
    expect(inQuietHours({ from: '09:00', to: '17:00', timeZone: 'UTC' }, NOON)).toBe(true);
    expect(inQuietHours(null, NIGHT)).toBe(false);
  });

  it('one push per agent per minute: the first ask at once, the others as one count when the minute ends', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'phone' });
    const clock = manualTimers();
    const notifier = await notifierFor(svc, { timers: clock.timers, now: () => NOON });
    events.publish(ask('apr_1'));
    events.publish(ask('apr_2'));
    events.publish(ask('apr_3'));
    events.publish(ask('apr_4'));
    events.publish(ask('apr_b', 'bob'));
    await waitFor(() => svc.received.length === 2);
    await notifier.idle();
    expect(svc.received).toHaveLength(2);
    const first = [0, 1].map((i) => JSON.parse(svc.open(i)) as { body: string; url: string });
    expect(first.map((p) => p.url).sort()).toEqual([
      `${ORIGIN}/#/approvals/apr_1`,
      `${ORIGIN}/#/approvals/apr_b`,
    ]);
    // The minute ends (and the grace for asks still on their way): default's
    // three further asks come as one push; bob had no more.
    expect(clock.fire()).toEqual([60_000 + BATCH_GRACE_MS, 60_000 + BATCH_GRACE_MS]);
    await waitFor(() => svc.received.length === 3);
    await notifier.idle();
    expect(JSON.parse(svc.open(2))).toMatchObject({
      title: 'Airlock: approvals requested',
      body: 'default asked 3 times',
      url: `${ORIGIN}/#/approvals`,
    });
    // The next minute began with that push: nothing more to say when it ends.
    expect(clock.fire()).toEqual([60_000 + BATCH_GRACE_MS]);
    await notifier.idle();
    expect(svc.received).toHaveLength(3);
    expect(clock.pending).toHaveLength(0);
  });

  it('two instances send one summary per agent per window, even when one hears an ask after the other’s window ended', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'phone' });
    // Two instances on one store hearing one event stream, their timers drifting.
    const [clockA, clockB] = [manualTimers(), manualTimers()];
    const a = await notifierFor(svc, { timers: clockA.timers, now: () => NOON });
    const b = await notifierFor(svc, { timers: clockB.timers, now: () => NOON });
    for (const id of ['apr_1', 'apr_2', 'apr_3']) events.publish(ask(id));
    await waitFor(() => svc.received.length === 1);
    await Promise.all([a.idle(), b.idle()]);
    // The first ask went out once (both instances claimed the same delivery).
    expect(svc.received).toHaveLength(1);
    // A's window ends first; then a fourth ask reaches both, then B's window ends.
    clockA.fire();
    await waitFor(() => svc.received.length === 2);
    await a.idle();
    events.publish(ask('apr_4'));
    await Promise.all([a.idle(), b.idle()]);
    clockB.fire();
    await Promise.all([a.idle(), b.idle()]);
    // One summary for the window (A's: "asked 2 times"); B's count of 3 is not sent again.
    expect(svc.received).toHaveLength(2);
    expect(JSON.parse(svc.open(1))).toMatchObject({ body: 'default asked 2 times' });
    // The ask A heard after its window is summarised with the next window, once.
    clockA.fire();
    clockB.fire();
    await waitFor(() => svc.received.length === 3);
    await Promise.all([a.idle(), b.idle()]);
    expect(svc.received).toHaveLength(3);
    expect(JSON.parse(svc.open(2))).toMatchObject({ body: 'default asked 1 time' });
  });

  it('nothing is pushed in quiet hours but an urgent rule’s ask; webhooks still get every ask', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    await saveSubscription(store, { ...svc.subscription, device: 'phone' });
    const hook = await hookReceiver();
    const notifier = await notifierFor(svc, {
      now: () => NIGHT,
      config: {
        quietHours: QUIET,
        batchSeconds: 0,
        webhooks: [{ url: hook.url }],
        allowPrivate: [hook.url.replace(/hook$/, '')],
      },
      urgent: (n) => n.about['rule'] === 'prod-deletes',
    });
    events.publish(ask('apr_quiet'));
    events.publish(ask('apr_urgent', 'default', 'prod-deletes'));
    await waitFor(() => hook.bodies.length === 2 && svc.received.length === 1);
    await notifier.idle();
    expect(svc.received).toHaveLength(1);
    expect(JSON.parse(svc.open(0)).url).toBe(`${ORIGIN}/#/approvals/apr_urgent`);
    const pushes = (await listDeliveries(store)).filter((d) => d.format === 'push');
    expect(pushes.map((d) => d.status).sort()).toEqual(['delivered', 'skipped']);
    expect(pushes.find((d) => d.status === 'skipped')?.error).toContain(
      'quiet hours (22:00–07:00)',
    );
  });

  it('the owner’s setting overrides the config file’s, owner-only and presence-gated; a test notification reaches the device', async () => {
    const svc = await pushService();
    closers.push(svc.close);
    const tk = await testKernel([], { dir: mkdtempSync(join(tmpdir(), 'airlock-quiet-')) });
    const sub = await saveSubscription(tk.kernel.store, { ...svc.subscription, device: 'phone' });
    const n = startNotifier({
      store: tk.kernel.store,
      events: tk.kernel.events,
      logger: silentLogger,
      origin: ORIGIN,
      config: { batchSeconds: 0 },
      now: () => NIGHT,
      sources: [
        pushSource({ store: tk.kernel.store, origin: ORIGIN, allowPrivate: [`${svc.origin}/`] }),
      ],
    });
    const app = createHttpApp({
      kernel: tk.kernel,
      logger: silentLogger,
      notify: { config: { batchSeconds: 0 }, notifier: n },
    });
    const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}/api/v1/notify`;
    closers.push(
      () => n.close(),
      () => app.close(),
      () => tk.close(),
    );
    const call = (path: string, method: string, headers: Record<string, string>, body?: unknown) =>
      fetch(`${base}/${path}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    const owner = await ownerHeaders(tk.kernel);
    const agent = await agentHeaders(tk.kernel, 'alice');
    // An agent can neither read nor change the settings, nor send a test.
    expect((await call('settings', 'PUT', agent, { quietHours: QUIET })).status).toBe(403);
    expect((await call('test', 'POST', agent, { destination: sub.id })).status).toBe(403);
    expect((await call('settings', 'GET', agent)).status).toBe(403);
    // A misspelled time is refused with what to write.
    const bad = await call('settings', 'PUT', owner, {
      quietHours: { from: '25:00', to: '07:00' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('HH:MM');
    const put = await call('settings', 'PUT', owner, { quietHours: QUIET });
    expect(put.status).toBe(200);
    expect((await put.json()).settings).toEqual({
      quietHours: QUIET,
      batchSeconds: 0,
      source: 'owner',
    });
    tk.kernel.events.publish(ask('apr_night'));
    await waitFor(async () =>
      (await listDeliveries(tk.kernel.store)).some((d) => d.status === 'skipped'),
    );
    expect(svc.received).toHaveLength(0);
    // The test notification goes through the real path: encrypted, to the device.
    const listed = await (await call('destinations', 'GET', owner)).json();
    expect(listed.destinations).toEqual([{ id: sub.id, label: svc.origin, format: 'push' }]);
    const test = await call('test', 'POST', owner, { destination: sub.id });
    expect(test.status).toBe(200);
    expect(svc.received).toHaveLength(1);
    expect(JSON.parse(svc.open(0)).title).toBe('Airlock: test notification');
    expect((await call('test', 'POST', owner, { destination: 'push_nope' })).status).toBe(404);
    // Reset: the config file's setting (no quiet hours) stands again.
    const reset = await (await call('settings', 'PUT', owner, { reset: true })).json();
    expect(reset.settings).toEqual({ quietHours: null, batchSeconds: 0, source: 'config' });
  });
});
