/**
 * The workspace UI's approvals inbox, grants, jobs and audit against a real
 * `airlock serve` (the test-only `ledger` door stands in for any door that
 * asks for consent), in headless Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { connectAgent, type Agent } from './mcp.js';

const TOKEN = 'web-ui-inbox-token-0123456789';
const dir = mkdtempSync(join(tmpdir(), 'airlock-web-inbox-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent;

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', dir, '--token', TOKEN]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/approvals`, { login: served.loginUrl! });
  agent = await connectAgent(served.url, 'inbox-test-agent', TOKEN);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: approvals inbox, grants, jobs, audit', () => {
  it('shows a request live, approves it for the chosen project, and revoking makes the next call answer approvalRequired', async () => {
    const { page } = ui;
    const first = await agent.call('ledger_request_write_access');
    expect(first.body.code).toBe('approvalRequired');
    const id = String(first.body.approvalID);

    // Appears without a reload, with the capability asked and the connection.
    const card = page.locator(`[data-approval-id="${id}"]`);
    await card.waitFor();
    await expect(card.getByRole('heading').textContent()).resolves.toBe('ledger: write access');
    await expect(card.locator('.connection').getAttribute('title')).resolves.toMatch(
      /^agent:default\/session:/,
    );
    await expect(card.locator('.connection').textContent()).resolves.toMatch(
      /^agent:default\/session:[0-9a-f]{8}…$/,
    );
    await expect(page.locator('[data-badge="approvals"]').textContent()).resolves.toBe('1');
    await screenshots(ui, 'approvals-pending');

    await card.getByLabel('Project or resource (optional)').fill('books');
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });

    const granted = await agent.call('ledger_request_write_access');
    expect(granted.body).toMatchObject({ grantID: expect.any(String) });
    const append = await agent.call('ledger_append', {
      operationID: randomUUID(),
      account: 'cash',
      amount: 5,
      expectedVersion: null,
    });
    expect(append.isError).toBe(false);

    const row = page.locator(`[data-grant-id="${String(granted.body.grantID)}"]`);
    await row.waitFor();
    await expect(row.locator('td').nth(2).textContent()).resolves.toBe('books');
    await expect(row.locator('.remaining').textContent()).resolves.toMatch(/^1[45] min/);
    await screenshots(ui, 'approvals-grant');

    await row.getByRole('button', { name: /Revoke ledger write grant/ }).click();
    await row.waitFor({ state: 'detached' });
    const refused = await agent.call('ledger_append', {
      operationID: randomUUID(),
      account: 'cash',
      amount: 1,
      expectedVersion: null,
    });
    expect(refused.isError).toBe(true);
    const again = await agent.call('ledger_request_write_access');
    expect(again.body.code).toBe('approvalRequired');
    await page.locator(`[data-approval-id="${String(again.body.approvalID)}"]`).waitFor();
  });

  it('collapses identical requests of one agent into one card with a count and a live age, and denies both from the keyboard', async () => {
    const { page } = ui;
    const other = await connectAgent(served.url, 'denied-agent', TOKEN);
    try {
      // The revoked request from the previous test is still pending; the same agent
      // (one token) asks the same from another session: one card, asked twice.
      const second = await other.call('ledger_request_write_access');
      const cards = page.locator('[data-approval-id]');
      const card = page.locator(`[data-approval-id="${String(second.body.approvalID)}"]`);
      await expect.poll(() => card.getAttribute('data-count')).toBe('2');
      expect(await cards.count()).toBe(1);
      const asked = card.locator('.asked');
      await expect(asked.textContent()).resolves.toBe('asked 2 times, first just now');
      // The age stays current: a card whose first ask is 5 minutes old says so by itself.
      await asked.evaluate((el) => {
        (el as HTMLElement).dataset.first = String(Date.now() - 5 * 60_000 - 1000);
      });
      await expect.poll(() => asked.textContent()).toBe('asked 2 times, first 5 min ago');
      await screenshots(ui, 'approvals-collapsed');

      await card.getByRole('button', { name: 'Deny' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => cards.count()).toBe(0);
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.id))
        .toBe('pending-title');
      expect((await other.call('ledger_request_write_access')).body.code).toBe('approvalDenied');
      expect((await agent.call('ledger_request_write_access')).body.code).toBe('approvalDenied');
    } finally {
      await other.close();
    }
  });

  it('shows a job started over MCP advancing to 100 % and finished, without reloading', async () => {
    const { page } = ui;
    await go(ui, 'jobs', 'Jobs');
    const { body } = await agent.call('ledger_count', { to: 60 });
    const job = page.locator(`[data-job-id="${String(body.jobId)}"]`);
    await job.waitFor();
    const seen = new Set<number>();
    await expect
      .poll(
        async () => {
          seen.add(Number(await job.locator('progress').getAttribute('value')));
          return job.getAttribute('data-status');
        },
        { interval: 50, timeout: 15_000 },
      )
      .toBe('completed');
    expect(await job.locator('progress').evaluate((p) => (p as HTMLProgressElement).value)).toBe(
      100,
    );
    expect([...seen].some((v) => v > 0 && v < 100)).toBe(true);
    await expect(job.locator('.status').textContent()).resolves.toBe('Finished');
    await expect(job.getByRole('button', { name: /Cancel/ }).count()).resolves.toBe(0);
    await screenshots(ui, 'jobs');
  });

  it('cancels a running job from the UI', async () => {
    const { page } = ui;
    const { body } = await agent.call('ledger_count', { to: 5000 });
    const job = page.locator(`[data-job-id="${String(body.jobId)}"]`);
    await job.getByRole('button', { name: 'Cancel job count' }).click();
    await expect.poll(() => job.getAttribute('data-status')).toBe('cancelled');
  });

  it('filters the audit trail by result and connection and exports what is shown', async () => {
    const { page } = ui;
    await go(ui, 'audit', 'Audit');
    const rows = page.locator('#audit-rows tr');
    await expect.poll(() => rows.count()).toBeGreaterThan(2);
    await page.getByLabel('Result').selectOption('error');
    const refusals = await rows.locator('td:nth-child(5)').allTextContents();
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals).not.toContain('ok');
    expect(refusals).toContain('notAuthorized');

    // A new refusal arrives live, already filtered.
    const before = await rows.count();
    await agent.call('ledger_append', {
      operationID: randomUUID(),
      account: 'cash',
      amount: 1,
      expectedVersion: null,
    });
    await expect.poll(() => rows.count()).toBe(before + 1);
    await screenshots(ui, 'audit');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export JSON lines' }).click();
    const file = await (await download).path();
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { result: string; door: string });
    expect(lines).toHaveLength(before + 1);
    expect(lines.every((l) => l.result !== 'ok' && l.door === 'ledger')).toBe(true);
  });

  it('renders the settings screen, and no screen logged a console error or an accessibility problem', async () => {
    await go(ui, 'settings', 'Settings');
    await screenshots(ui, 'settings');
    await go(ui, 'approvals', 'Approvals');
    await screenshots(ui, 'approvals');
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });

  it('reconnects by itself when the server restarts, and shows requests made after it', async () => {
    const { page } = ui;
    const port = new URL(served.url).port;
    served.child.kill('SIGTERM');
    await served.exited;
    await page.locator('#live[data-state="down"]').waitFor();
    served = await startServe([
      '--port',
      port,
      '--doors',
      'ledger',
      '--data',
      dir,
      '--token',
      TOKEN,
    ]);
    await page.locator('#live[data-state="live"]').waitFor({ timeout: 20_000 });
    const after = await connectAgent(served.url, 'after-restart', TOKEN);
    try {
      const asked = await after.call('ledger_request_write_access');
      await page.locator(`[data-approval-id="${String(asked.body.approvalID)}"]`).waitFor();
    } finally {
      await after.close();
    }
    // Only the network's own messages about the cut stream and the refused reconnects reached the console.
    expect(
      ui.errors.filter((e) => !/net::ERR_(CONNECTION_REFUSED|INCOMPLETE_CHUNKED_ENCODING)/.test(e)),
    ).toEqual([]);
  });
});
