/**
 * Settings → Notifications in a real browser (issue 30): the owner sets
 * quiet hours and batching (kept as the owner's setting, overriding the
 * config file's), and "Send a test notification" reaches a webhook on
 * loopback through its real delivery path (signed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { openUi, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';
import { SIGNATURE_HEADER, verifyWebhook } from '../../src/notify/signature.js';

const SECRET = 'whsec-ui-test-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'airlock-notify-ui-'));
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const hook = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => (received.push({ headers: req.headers, body }), res.writeHead(200).end()));
});
let served: Served;
let browser: Browser;
let ui: UiPage;

const owner = async (path: string) =>
  (await (
    await fetch(`${served.url}/api/v1/${path}`, {
      headers: { authorization: `Bearer ${served.ownerToken}` },
    })
  ).json()) as Record<string, unknown>;

beforeAll(async () => {
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  const config = join(dir, 'airlock.json');
  writeFileSync(
    config,
    JSON.stringify({
      notify: {
        webhooks: [{ url, secret: SECRET }],
        allowPrivate: [url.replace(/hook$/, '')],
        batchSeconds: 120,
      },
    }),
  );
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', join(dir, 'data'), '--config', config]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/settings`, { login: served.loginUrl! });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  await new Promise<void>((r) => hook.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

describe('Settings → Notifications', () => {
  it('shows the config file’s batching, and saving quiet hours makes them the owner’s setting', async () => {
    const { page } = ui;
    await page.locator('#quiet-source', { hasText: 'From the config file' }).waitFor();
    expect(await page.locator('#batch-seconds').inputValue()).toBe('120');
    await page.locator('#quiet-on').check();
    await page.locator('#quiet-from').fill('21:30');
    await page.locator('#quiet-to').fill('06:45');
    await page.locator('#quiet-zone').fill('Europe/Berlin');
    await page.locator('#batch-seconds').fill('30');
    await page.getByRole('button', { name: 'Save quiet hours' }).click();
    await page.locator('#quiet-source', { hasText: 'Set here' }).waitFor();
    expect((await owner('notify/settings'))['settings']).toEqual({
      quietHours: { from: '21:30', to: '06:45', timeZone: 'Europe/Berlin' },
      batchSeconds: 30,
      source: 'owner',
    });
  });

  it('“Send a test notification” reaches the webhook, signed', async () => {
    const { page } = ui;
    const row = page.locator('#notify-destinations li[data-format="json"]');
    await row.getByRole('button', { name: 'Send a test notification' }).click();
    await row.getByText('Sent.').waitFor();
    await waitFor(() => received.length === 1);
    const [{ headers, body }] = received as [{ headers: IncomingHttpHeaders; body: string }];
    expect(
      verifyWebhook(SECRET, headers[SIGNATURE_HEADER.toLowerCase()] as string, body),
    ).toMatchObject({
      ok: true,
    });
    expect(JSON.parse(body)).toMatchObject({ text: expect.stringContaining('A test from') });
    expect(ui.errors).toEqual([]);
  });
});
