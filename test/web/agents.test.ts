/**
 * The Agents screen (issue 27) against a real `airlock serve`, in headless
 * Chromium: the owner adds an agent and gets its token once with the client
 * configurations, the agent connects with them and its calls show on its
 * card (and in the audit filtered to it in one click), and revoking it on the
 * screen ends its open MCP session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { launchChromium } from '../helpers/browser.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';
import { connectAgent, type Agent } from './mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-agents-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent | undefined;
let token = '';

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', dir]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/agents`, { login: served.loginUrl! });
}, 60_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: agents', () => {
  it('adds an agent and shows its token once, with the HTTP and stdio client configurations', async () => {
    const { page } = ui;
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.getByLabel(/^Name/).fill('robin');
    await page.getByRole('button', { name: 'Add agent' }).click();
    const panel = page.locator('[data-new-agent="robin"]');
    await panel.waitFor();
    token = (await panel.getByLabel('Token', { exact: true }).textContent())!.trim();
    expect(token).toMatch(/^ak_/);
    const http = JSON.parse((await panel.getByLabel('HTTP configuration').textContent())!) as {
      mcpServers: Record<string, { type: string; url: string; headers: Record<string, string> }>;
    };
    expect(http.mcpServers.airlock).toEqual({
      type: 'http',
      url: `${served.url}/mcp`,
      headers: { Authorization: `Bearer ${token}` },
    });
    await expect(panel.getByLabel('Stdio configuration').textContent()).resolves.toContain(
      '"stdio"',
    );
    // Kept from every agent driving the page.
    await expect(panel.getAttribute('data-wu-private')).resolves.toBe('');
    await page.locator('li[data-agent="robin"]').waitFor();
    await screenshots(ui, 'agents-new');
    expect(ui.a11y).toEqual([]);

    // Dismissed, the token is gone from the page.
    await panel.getByRole('button', { name: 'I have saved the token' }).click();
    await panel.waitFor({ state: 'detached' });
    await expect(page.content()).resolves.not.toContain(token);
  });

  it("shows the agent's last calls, today's counts, its pending asks and the rules naming it, and its audit in one click", async () => {
    const { page } = ui;
    const rule = await fetch(`${served.url}/api/v1/policy/rules`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${served.ownerToken!}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ agent: 'rob*', tool: 'ledger_echo', decision: 'ask' }),
    });
    expect(rule.status).toBe(201);
    const { id } = (await rule.json()) as { id: string };
    agent = await connectAgent(served.url, 'robin-client', token);
    // With the configuration's token, the agent's calls work and are audited as robin's.
    expect((await agent.call('ledger_count', { to: 1 })).isError).toBe(false);
    expect((await agent.call('ledger_echo', { text: 'may I?' })).body.code).toBe(
      'approvalRequired',
    );
    const card = page.locator('li[data-agent="robin"]');
    await card.locator(`li[data-rule="${id}"]`).waitFor();
    await card.locator('[data-pending="1"]').waitFor();
    await card
      .locator('table[aria-label="Last calls of robin"] td', { hasText: 'ledger_count' })
      .waitFor();
    await expect(card.locator('[data-today]').textContent()).resolves.toMatch(
      /Calls today: 2 — by effect: 1 read, 1 write; by outcome: 1 approvalRequired, 1 ok/,
    );
    await screenshots(ui, 'agents-activity');
    expect(ui.a11y).toEqual([]);

    await card.getByRole('link', { name: 'Audit of robin' }).click();
    await page.locator('[data-agent-filter="robin"]').waitFor();
    const rows = page.locator('#audit-rows tr');
    await rows.first().waitFor();
    const connections = await rows.locator('td:nth-child(4)').allTextContents();
    expect(connections.length).toBeGreaterThan(0);
    for (const c of connections) expect(c).toMatch(/^agent:robin(\/|$)/);
    await expect(page.locator('#audit-rows').textContent()).resolves.not.toContain('agents.add');
  });

  it('revokes the agent on the screen, and its open MCP session ends', async () => {
    const { page } = ui;
    await go(ui, 'agents', 'Agents');
    const card = page.locator('li[data-agent="robin"]');
    await card.getByRole('button', { name: 'Revoke robin' }).click();
    await card.getByRole('button', { name: 'Revoke now' }).click();
    await page.locator('li[data-agent="robin"][data-revoked]').waitFor();
    // Its pending ask is cancelled with it.
    await page.locator('li[data-agent="robin"] [data-pending="0"]').waitFor();
    await expect(agent!.client.listTools()).rejects.toThrow();
    const res = await fetch(`${served.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(ui.errors).toEqual([]);
  });
});
