import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.js';
import { createEventBus, type EventBus } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import type { Store } from '../../src/kernel/store.js';
import {
  DELIVERIES,
  listDeliveries,
  refusedWebhook,
  startNotifier,
  sweepDeliveries,
  type Delivery,
  type Notifier,
  type WebhookConfig,
} from '../../src/notify/webhooks.js';
import { SIGNATURE_HEADER, verifyWebhook } from '../../src/notify/signature.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { waitFor } from '../helpers/wait.js';
import { run, testEnv } from '../helpers/cli.js';

const SECRET = 'whsec-test-0123456789abcdef';
const ORIGIN = 'https://airlock.example';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback: answers each request with the next status of `statuses` (then 200). */
async function receiver(statuses: number[] = []) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const ask = (extra: Record<string, unknown> = {}) => ({
  event: 'approvalRequested',
  approval: {
    id: 'apr_1',
    kind: 'policy',
    agent: 'default',
    connection: 'default',
    door: 'mcp',
    tool: 'fs_write_file',
    capability: 'policy',
    rule: 'writes',
    preview: { path: '/etc/passwd', content: 'ARGUMENT-VALUE' },
    summary: 'write ARGUMENT-VALUE',
    ...extra,
  },
});

let dir: string;
let store: Store;
let events: EventBus;
let notifiers: Notifier[];
let closers: (() => Promise<void>)[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'airlock-notify-'));
  ({ store } = await openStore({ data: dir }));
  events = await createEventBus();
  notifiers = [];
  closers = [];
});

afterEach(async () => {
  for (const n of notifiers) await n.close();
  for (const c of closers) await c();
  await events.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function hook(config: Partial<WebhookConfig> & { statuses?: number[] } = {}) {
  const r = await receiver(config.statuses);
  closers.push(r.close);
  const notifier = startNotifier({
    store,
    events,
    logger: silentLogger,
    origin: ORIGIN,
    config: {
      webhooks: [{ url: r.url, secret: SECRET, ...config }],
      allowPrivate: [r.url.replace(/hook$/, '')],
    },
    retryDelaysMs: [10, 20, 40],
  });
  notifiers.push(notifier);
  return { ...r, notifier };
}

describe('webhooks', () => {
  it('signs every JSON delivery so the verify helper accepts it, and carries the card link but no argument', async () => {
    const r = await hook();
    events.publish(ask());
    events.publish({
      event: 'jobFinished',
      id: 'job_9',
      status: 'failed',
      error: 'x',
      agent: 'bob',
    });
    await waitFor(() => r.received.length === 2);
    for (const { headers, body } of r.received) {
      expect(
        verifyWebhook(SECRET, headers[SIGNATURE_HEADER.toLowerCase()] as string, body),
      ).toEqual(expect.objectContaining({ ok: true }));
      expect(body).not.toContain('ARGUMENT-VALUE');
      expect(body).not.toContain('/etc/passwd');
      expect(body).not.toContain(SECRET);
    }
    const bodies = r.received.map((x) => JSON.parse(x.body));
    expect(bodies.find((b) => b.event === 'approvalRequested')).toMatchObject({
      event: 'approvalRequested',
      text: '*default* asks to call `fs_write_file` on *mcp*',
      link: `${ORIGIN}/#/approvals/apr_1`,
      approval: 'apr_1',
    });
    expect(bodies.find((b) => b.event === 'jobFinished')).toMatchObject({ job: 'job_9' });
  });

  it('verify refuses a delivery replayed outside the 5-minute window, or a changed body', async () => {
    const r = await hook();
    events.publish(ask());
    await waitFor(() => r.received.length === 1);
    const { headers, body } = r.received[0]!;
    const header = headers[SIGNATURE_HEADER.toLowerCase()] as string;
    const t = Number(/t=(\d+)/.exec(header)![1]);
    expect(verifyWebhook(SECRET, header, body, { nowS: t + 299 }).ok).toBe(true);
    expect(verifyWebhook(SECRET, header, body, { nowS: t + 301 })).toEqual({
      ok: false,
      reason: `timestamp ${t} is outside the replay window`,
    });
    expect(verifyWebhook(SECRET, header, body, { nowS: t - 301 }).ok).toBe(false);
    expect(verifyWebhook(SECRET, header, body.replace('apr_1', 'apr_2')).ok).toBe(false);
    expect(verifyWebhook('another-secret-of-16+', header, body).ok).toBe(false);
  });

  it('retries after a 500 and records the delivery delivered', async () => {
    const r = await hook({ statuses: [500, 503] });
    events.publish(ask());
    await waitFor(() => r.received.length === 3);
    await r.notifier.idle();
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    const [delivery] = await listDeliveries(store);
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 3,
      event: 'approvalRequested',
    });
  });

  it('marks a delivery failed after its retries, and lists it to the owner only', async () => {
    const r = await hook({ statuses: [500, 500, 500, 500] });
    events.publish(ask());
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'failed');
    expect(r.received).toHaveLength(4);
    expect((await listDeliveries(store))[0]).toMatchObject({
      attempts: 4,
      error: 'HTTP 500',
      webhook: new URL(r.url).origin,
    });

    const tk: TestKernel = await testKernel([], { dir });
    closers.push(() => tk.close());
    const app: HttpApp = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
    closers.push(() => app.close());
    const { port } = await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${port}/api/v1/notify/deliveries`;
    const owner = await (await fetch(url, { headers: await ownerHeaders(tk.kernel) })).json();
    expect(owner.deliveries[0]).toMatchObject({ status: 'failed', attempts: 4 });
    const agent = await fetch(url, { headers: await agentHeaders(tk.kernel, 'alice') });
    expect(agent.status).toBe(403);
  });

  it('a 4xx is not retried', async () => {
    const r = await hook({ statuses: [404] });
    events.publish(ask());
    await waitFor(async () => (await listDeliveries(store))[0]?.status === 'failed');
    expect(r.received).toHaveLength(1);
  });

  it('the slack format is an incoming-webhook message with a button opening the card', async () => {
    const r = await hook({ format: 'slack' });
    events.publish(ask());
    await waitFor(() => r.received.length === 1);
    expect(r.received[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.received[0]!.body)).toEqual({
      text: `*default* asks to call \`fs_write_file\` on *mcp*: ${ORIGIN}/#/approvals/apr_1`,
      blocks: [
        {
          type: 'section',
          text: { type: 'mrkdwn', text: '*default* asks to call `fs_write_file` on *mcp*' },
        },
        {
          type: 'actions',
          elements: [
            {
              type: 'button',
              text: { type: 'plain_text', text: 'Open in Airlock' },
              url: `${ORIGIN}/#/approvals/apr_1`,
              action_id: 'open',
            },
          ],
        },
      ],
    });
  });

  it('the ntfy format sends the text as the body with Title and Click headers', async () => {
    const r = await hook({ format: 'ntfy' });
    events.publish(ask());
    await waitFor(() => r.received.length === 1);
    const { headers, body } = r.received[0]!;
    expect(body).toBe('*default* asks to call `fs_write_file` on *mcp*');
    expect(headers['title']).toBe('Airlock: approval requested');
    expect(headers['click']).toBe(`${ORIGIN}/#/approvals/apr_1`);
  });

  it('delivers only the events a webhook asks for, and jobs only when they failed', async () => {
    const r = await hook({ events: ['jobFinished'] });
    events.publish(ask());
    events.publish({ event: 'jobFinished', id: 'job_ok', status: 'succeeded' });
    events.publish({ event: 'jobFinished', id: 'job_bad', status: 'failed', error: 'x' });
    await waitFor(() => r.received.length >= 1);
    await Promise.all(notifiers.map((n) => n.idle()));
    expect(r.received.map((x) => JSON.parse(x.body).job)).toEqual(['job_bad']);
  });

  it('two instances on one store deliver each event once', async () => {
    const r = await hook();
    notifiers.push(
      startNotifier({
        store,
        events,
        logger: silentLogger,
        origin: ORIGIN,
        config: { webhooks: [{ url: r.url, secret: SECRET }], allowPrivate: [r.url] },
      }),
    );
    events.publish(ask());
    events.publish(ask({ id: 'apr_2' }));
    await waitFor(() => r.received.length >= 2);
    await Promise.all(notifiers.map((n) => n.idle()));
    expect(r.received).toHaveLength(2);
  });
});

describe('webhook destinations', () => {
  it('a loopback or private URL is refused unless notify.allowPrivate lists its prefix', async () => {
    for (const url of [
      'http://127.0.0.1:9/h',
      'http://[::1]:9/h',
      'http://10.1.2.3/h',
      'http://169.254.169.254/latest',
    ]) {
      expect(await refusedWebhook({ webhooks: [{ url }] })).toMatch(
        `notify.webhooks: ${url} is refused`,
      );
    }
    expect(await refusedWebhook({ webhooks: [{ url: 'http://localhost:9/h' }] })).toMatch(
      'private or loopback',
    );
    expect(
      await refusedWebhook({
        webhooks: [{ url: 'http://127.0.0.1:9/h' }],
        allowPrivate: ['http://127.0.0.1:9/'],
      }),
    ).toBeNull();
    expect(
      await refusedWebhook({
        webhooks: [{ url: 'http://127.0.0.1:9/h' }],
        allowPrivate: ['http://127.0.0.1:8/'],
      }),
    ).toMatch('refused');
  });

  it('serve refuses to start with a loopback webhook not in allowPrivate (exit 2, naming it)', async () => {
    const config = join(dir, 'airlock.json');
    writeFileSync(
      config,
      JSON.stringify({
        notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook', format: 'ntfy' }] },
      }),
    );
    const result = await run(
      ['serve', '--config', config, '--data', join(dir, 'data'), '--port', '0'],
      testEnv(),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('notify.webhooks: http://127.0.0.1:9/hook is refused');
  });
});

describe('delivery records', () => {
  it('the store keeps the newest deliveries: older ended ones beyond the limit are swept, young or sending ones never', async () => {
    const hour = 60 * 60 * 1000;
    const now = Date.UTC(2026, 11, 4, 12);
    const row = (eventId: number, status: Delivery['status'], age: number): Delivery => ({
      eventId,
      event: 'approvalRequested',
      webhook: 'http://127.0.0.1:1',
      format: 'json',
      status,
      attempts: 1,
      error: null,
      createdAt: now - age,
      updatedAt: now - age,
    });
    await store.transaction(async (tx) => {
      for (let id = 1; id <= 30; id++) {
        // 1–10 old and ended, 11 old but still sending, 12–30 young.
        const status = id === 11 ? 'sending' : 'delivered';
        const age = id <= 11 ? 2 * hour : 1000;
        await tx.records.put(
          DELIVERIES,
          `${String(id).padStart(16, '0')}:hook`,
          row(id, status, age),
        );
      }
    });
    expect(await sweepDeliveries(store, now, 5)).toBe(10);
    const left = (await listDeliveries(store)).map((d) => d.eventId);
    expect(left).toHaveLength(20);
    expect(Math.min(...left)).toBe(11);
    // Within the limit nothing goes.
    expect(await sweepDeliveries(store, now, 1_000)).toBe(0);
  });
});
