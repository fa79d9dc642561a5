/**
 * The workspace page loads the page door's bridge when the owner switches it
 * on, so an agent drives the UI through the wu_* tools — and can never
 * approve its own consent request by clicking.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { connectAgent, type Agent } from './mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-bridge-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let pageAgent: Agent;
let ledgerAgent: Agent;

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'page,ledger', '--relay-port', '0', '--data', dir]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/settings`, { login: served.loginUrl! });
  pageAgent = await connectAgent(served.url, 'page-agent', served.agentToken!, '/mcp/page');
  ledgerAgent = await connectAgent(served.url, 'ledger-agent', served.agentToken!);
});

afterAll(async () => {
  await pageAgent?.close();
  await ledgerAgent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const connected = async () => (await pageAgent.call('wu_conexion')).body.app_conectada;

describe('web UI: the page bridge', () => {
  it('stays off until the owner switches it on, then an agent can list and run the workspace actions', async () => {
    const { page } = ui;
    expect(await connected()).toBe(false);
    await page.getByLabel('Let agents drive this page').check();
    await expect
      .poll(() => page.locator('#bridge-status').getAttribute('data-state'))
      .toBe('authenticated');
    expect(await connected()).toBe(true);

    const listed = await pageAgent.call('wu_list_actions');
    expect(JSON.stringify(listed.body)).toContain('workspace_navigate');
    const ran = await pageAgent.call('wu_execute_action', {
      action: 'workspace_navigate',
      params: { screen: 'jobs' },
    });
    expect(ran.body).toMatchObject({ success: true });
    await page.getByRole('heading', { level: 1, name: 'Jobs' }).waitFor();
    const state = await pageAgent.call('wu_get_state', { path: 'screen' });
    expect(state.body).toMatchObject({ value: 'jobs' });
    // The token lives in memory only.
    const stored = await page.evaluate(() =>
      JSON.stringify({ ...localStorage, ...sessionStorage }),
    );
    expect(stored).not.toMatch(/token/i);
  });

  it('reconnects by itself after a reload while switched on', async () => {
    const { page } = ui;
    await page.reload();
    await page.locator('#live[data-state="live"]').waitFor();
    await expect.poll(connected, { timeout: 10_000 }).toBe(true);
    await go(ui, 'settings', 'Settings');
    await screenshots(ui, 'settings-bridge');
  });

  it("refuses an agent's click on Approve, even with click and type switched on", async () => {
    const { page } = ui;
    await page.getByLabel('Also let them click and type').check();
    const asked = await ledgerAgent.call('ledger_request_write_access');
    await go(ui, 'approvals', 'Approvals');
    const card = page.locator(`[data-approval-id="${String(asked.body.approvalID)}"]`);
    await card.waitFor();
    // Both clients are the agent `default`: it sees its own request, and cannot decide it.
    const clicked = await pageAgent.call('wu_click', {
      selector: `[data-approval-id="${String(asked.body.approvalID)}"] button.primary`,
    });
    expect(clicked.body.code).toBe('WU_PERMISSION_DENIED');
    // A script's click, past the bridge, is refused by the page itself.
    await card.locator('button.primary').evaluate((b: HTMLElement) => b.click());
    await expect
      .poll(() => card.locator('[role="alert"]').textContent())
      .toContain('your own click');
    expect((await ledgerAgent.call('ledger_request_write_access')).body.code).toBe(
      'approvalRequired',
    );
    // The owner's own click still works.
    await card.getByRole('button', { name: 'Approve' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await ledgerAgent.call('ledger_request_write_access')).body).toMatchObject({
      grantID: expect.any(String),
    });
  });

  it('disconnects when switched off, and logged no console errors', async () => {
    const { page } = ui;
    await go(ui, 'settings', 'Settings');
    await page.getByLabel('Let agents drive this page').uncheck();
    await expect.poll(connected).toBe(false);
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });
});
