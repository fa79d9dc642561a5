/**
 * A real page in Chromium too busy to list its actions when the door asks
 * whether one is destructive: the `confirm` action is asked, and runs only
 * after the owner approves (the door's wait is shortened to 300 ms, the page
 * busy for 2.5 s, past the 2 s the door once waited).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/client';
import {
  mcpClient,
  openDemo,
  startWorkspace,
  type CallResult,
  type Workspace,
} from './browser-helpers.js';
import { launchChromium } from '../../helpers/browser.js';
import { toolJson } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';

let ws: Workspace;
let browser: Browser;
let page: Page;
let client: Client;

type Win = {
  bridge: {
    action(name: string, def: unknown): void;
    setConfirmHandler(h: () => boolean): void;
  };
  wiped: number;
  busyDone: boolean;
};

beforeAll(async () => {
  [ws, browser] = await Promise.all([
    startWorkspace({}, { effectTimeoutMs: 300 }),
    launchChromium(),
  ]);
  client = await mcpClient(ws);
  page = await openDemo(browser, ws);
  await page.evaluate(() => {
    const w = window as unknown as Win;
    w.wiped = 0;
    // The page's own confirm says yes: only the owner's policy stands in the way.
    w.bridge.setConfirmHandler(() => true);
    w.bridge.action('wipe_everything', {
      description: 'Deletes everything (asks to confirm).',
      confirm: true,
      handler: () => ({ wiped: ++w.wiped }),
    });
  });
});
afterAll(async () => {
  await client?.close();
  await browser?.close();
  await ws?.close();
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;

describe('a page too busy to say what an action does', () => {
  it('its confirm action is asked, and never runs before the owner approves', async () => {
    // The page's main thread is busy from the next task for 2.5 s.
    await page.evaluate(() => {
      const w = window as unknown as Win;
      w.busyDone = false;
      setTimeout(() => {
        const end = Date.now() + 2500;
        while (Date.now() < end);
        w.busyDone = true;
      }, 0);
    });
    const asked = await call('wu_execute_action', { action: 'wipe_everything' });
    expect(asked.isError).toBe(true);
    expect(toolJson(asked).code).toBe('approvalRequired');
    // Once the page is free again (and has answered the list it was asked for), nothing ran.
    await waitFor(() => page.evaluate(() => (window as unknown as Win).busyDone), {
      message: 'the page to be free again',
    });
    expect(await page.evaluate(() => (window as unknown as Win).wiped)).toBe(0);
    const [pending] = await ws.tk.kernel.consent.pending();
    expect(pending!.preview).toMatchObject({
      effect: 'destructive',
      effectUnknown: expect.any(String),
    });
    // The owner approves: the very call runs, once.
    await ws.tk.kernel.asks.approve(pending!.id, 'once');
    const ran = await call('wu_execute_action', { action: 'wipe_everything' });
    expect(toolJson(ran)).toMatchObject({ success: true, result: { wiped: 1 } });
    expect(await page.evaluate(() => (window as unknown as Win).wiped)).toBe(1);
  });
});
