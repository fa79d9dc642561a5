/**
 * Connecting a remote MCP client by OAuth is the owner's consent (issue 29,
 * spec/authority.md §7), in headless Chromium against a real `airlock
 * serve`: the SDK v2 client's authorization URL opens the consent page,
 * which shows the client and what it would reach; the owner names the agent
 * and approves with a click; the browser goes back to the client with a
 * code; the client calls tools as that agent; the Agents screen shows the
 * OAuth client, and revoking the agent there ends its tokens at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { launchChromium } from '../helpers/browser.js';
import { cimdHost, MemoryProvider, type CimdHost } from '../helpers/oauth-client.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-oauth-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let cimd: CimdHost;
let provider: MemoryProvider;

beforeAll(async () => {
  [served, browser, cimd] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', dir]),
    launchChromium(),
    cimdHost('Claude Test'),
  ]);
  ui = await openUi(browser, `${served.url}/#/agents`, { login: served.loginUrl! });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await cimd?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const listTools = async () => {
  const client = new Client({ name: 'oauth-web', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.url}/mcp/ledger`), {
      authProvider: provider,
    }),
  );
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
};

describe('web UI: OAuth consent', () => {
  it('shows the client and what it reaches, and the owner approves it as a named, read-only agent', async () => {
    provider = new MemoryProvider(cimd);
    const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/mcp/ledger`), {
      authProvider: provider,
    });
    const refused = await new Client({ name: 'oauth-web', version: '1.0.0' })
      .connect(transport)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(UnauthorizedError);

    const { page } = ui;
    await page.goto(provider.authorizationUrl!.href);
    await page.getByRole('heading', { level: 1, name: 'Connect an MCP client' }).waitFor();
    const consent = page.locator('#oauth-consent');
    await consent.locator('[data-client-name="Claude Test"]').waitFor();
    await expect(consent.locator('[data-doors]').textContent()).resolves.toContain('ledger');
    await expect(consent.locator('[data-redirect-host]').textContent()).resolves.toBe(
      new URL(cimd.redirectUri).host,
    );
    await expect(consent.getAttribute('data-wu-private')).resolves.toBe('');
    // A loopback client's name is any local program's claim: the page says so.
    await expect(consent.locator('[data-warning]').first().textContent()).resolves.toMatch(
      /any program here can claim any name/,
    );
    await screenshots(ui, 'oauth-consent');
    expect(ui.a11y).toEqual([]);

    await page.getByLabel(/^Act as the agent/).fill('claude-web');
    await page.getByLabel(/Read-only/).check();
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(cimd.redirectUri)),
      page.getByRole('button', { name: 'Approve' }).click(),
    ]);
    const callback = new URL(page.url()).searchParams;
    expect(callback.get('code')).toBeTruthy();
    await transport.finishAuth(callback);
    expect(await listTools()).toContain('ledger_echo');

    // Read-only: the owner's rules deny this agent every write.
    const policy = (await (
      await fetch(`${served.url}/api/v1/policy`, {
        headers: { authorization: `Bearer ${served.ownerToken!}` },
      })
    ).json()) as { rules: { agent?: string; effect?: string; decision: string }[] };
    expect(
      policy.rules
        .filter((r) => r.agent === 'claude-web' && r.decision === 'deny')
        .map((r) => r.effect),
    ).toEqual(expect.arrayContaining(['write', 'destructive']));
  });

  it('the Agents screen shows the OAuth client, and revoking there ends its tokens', async () => {
    await ui.page.goto(`${served.url}/#/agents`);
    await ui.page.locator('#live[data-state="live"]').waitFor();
    await go(ui, 'agents', 'Agents');
    const card = ui.page.locator('li[data-agent="claude-web"]');
    await card.locator(`[data-oauth-client="${cimd.clientId}"]`).waitFor();
    await card.getByRole('button', { name: 'Revoke claude-web' }).click();
    await card.getByRole('button', { name: 'Revoke now' }).click();
    await ui.page.locator('li[data-agent="claude-web"][data-revoked]').waitFor();
    const error = await listTools().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeTruthy();
  });

  it('a consent page opened without the owner signed in shows only the sign-in', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${served.url}/oauth/consent/some-id`);
    await page.getByRole('heading', { level: 1, name: /sign in/i }).waitFor();
    await expect(page.locator('#oauth-consent').count()).resolves.toBe(0);
    await context.close();
  });
});
