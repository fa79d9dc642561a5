/**
 * An OAuth upstream on the Upstreams screen (spec/gateway.md §1 "OAuth
 * upstreams"), against a real `airlock serve` and a real authorization
 * server (oidc-provider) in headless Chromium: the owner chooses Connect,
 * the browser goes to the upstream's authorization server and back to
 * Airlock's callback page, which finishes the connect; an agent's calls then
 * work. Revoked at the authorization server, the screen offers Reconnect and
 * the agent's calls answer `unavailable` naming the upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { launchChromium } from '../helpers/browser.js';
import { connectClient } from '../helpers/mcp-client.js';
import { openUi, screenshots, type UiPage } from './browser.js';
import { oauthUpstream, type OAuthUpstream } from '../doors/mcp/oauth-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-upstreams-oauth-'));
let up: OAuthUpstream;
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Client;

type Result = { isError?: boolean; content: Array<{ text?: string }> };
const call = async (name: string) =>
  (await agent.callTool({ name, arguments: { name: 'ada' } })) as unknown as Result;

beforeAll(async () => {
  up = await oauthUpstream();
  const config = join(dir, 'airlock.json');
  writeFileSync(config, JSON.stringify({ upstreams: { gh: { url: up.url, oauth: {} } } }));
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', dir, '--config', config]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/upstreams`, { login: served.loginUrl! });
}, 60_000);

afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: an OAuth upstream', () => {
  it('the owner connects it with Connect: the browser goes to its authorization server and back, and calls work', async () => {
    const { page } = ui;
    const card = page.locator('li[data-upstream="gh"]');
    await card.locator('[data-authorization="notConnected"]').waitFor();
    await screenshots(ui, 'upstreams-oauth-not-connected');
    // The owner's own click (a trusted gesture): the tab goes to the authorization server.
    await card.getByRole('button', { name: 'Connect' }).click();
    await page.waitForURL((u) => u.href.startsWith(`${served.url}/#/upstreams`), {
      timeout: 20_000,
    });
    await card.locator('[data-authorization="connected"]').waitFor({ timeout: 20_000 });
    await expect(card.textContent()).resolves.toContain(`Connected to ${up.issuer}`);
    // The code is gone from the address bar and history.
    expect(page.url()).not.toContain('code=');
    // Connected is the grant; the upstream then starts and lists its tools, which the card shows.
    await card.locator('[data-tool="whoami"]').waitFor({ timeout: 20_000 });
    agent = await connectClient(`${served.url}/mcp`, { token: served.agentToken! });
    const listed = await agent.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('gh_whoami');
    expect((await call('gh_whoami')).content[0]!.text).toBe('hello ada');
    await screenshots(ui, 'upstreams-oauth-connected');
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });

  it('revoked at the authorization server: agents get unavailable naming it, the screen offers Reconnect', async () => {
    const { page } = ui;
    await up.revokeAll();
    const refused = await call('gh_whoami');
    expect(refused.isError).toBe(true);
    const error = JSON.parse(refused.content[0]!.text!) as { code: string; message: string };
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain("'gh'");
    const card = page.locator('li[data-upstream="gh"]');
    await card.locator('[data-authorization="reconnect"]').waitFor({ timeout: 20_000 });
    await card.getByRole('button', { name: 'Reconnect' }).waitFor();
    await screenshots(ui, 'upstreams-oauth-reconnect');

    await card.getByRole('button', { name: 'Reconnect' }).click();
    await card.locator('[data-authorization="connected"]').waitFor({ timeout: 20_000 });
    expect((await call('gh_whoami')).content[0]!.text).toBe('hello ada');
    expect(ui.errors).toEqual([]);
  });
});
