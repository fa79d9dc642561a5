/**
 * The inbox card of a scene ask in headless Chromium (issue 27): the op in
 * words and each touched page's before/after thumbnail, drawn as images.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { openUi, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { testEnv } from '../helpers/cli.js';
import { connectAgent, type Agent } from './mcp.js';
import { pageOf, textNodeOf } from '../doors/scene/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-ask-thumbs-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent;

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'scene', '--data', dir], testEnv()),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/approvals`, { login: served.loginUrl! });
  agent = await connectAgent(served.url, 'thumbs-agent', served.agentToken!);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: a scene ask’s card', () => {
  it('shows the removal in words and the page before and after as pictures', async () => {
    const opened = await agent.call('koharu.open_project', {
      path: `t-${randomUUID()}`,
      createName: 'Thumbs',
    });
    expect(opened.isError).toBe(false);
    const page = randomUUID();
    const node = randomUUID();
    const added = await agent.call('koharu.apply', {
      op: { addPage: { page: pageOf([textNodeOf('Where are you going?', node)], page, 'p1') } },
    });
    expect(added.isError).toBe(false);
    const asked = await agent.call('koharu.apply', { op: { removeNode: { page, id: node } } });
    expect(asked.body.code).toBe('approvalRequired');

    const card = ui.page.locator(`[data-approval-id="${String(asked.body.approvalID)}"]`);
    await card.waitFor();
    await expect(card.locator('[data-detail="changes"]').textContent()).resolves.toBe(
      'remove text "Where are you going?" from page 1 "p1"',
    );
    for (const when of ['before', 'after']) {
      const img = card.locator(`img[data-thumbnail="${when}"]`);
      await expect
        .poll(() => img.evaluate((i) => (i as HTMLImageElement).naturalWidth))
        .toBeGreaterThan(0);
      await expect(img.getAttribute('alt')).resolves.toBe(`page 1 "p1" ${when}`);
    }
  });
});
