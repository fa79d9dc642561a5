/**
 * The page door's asks in real Chromium (issue 27): the card names the
 * action with the page's own label, the element a click targets, and the
 * store path a set_state writes; click, type and set_state name their
 * subject; set_state keeps the value it showed — an approved write whose
 * value the page changed since is asked again, saying what changed, and
 * nothing is written.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/client';
import {
  mcpClient,
  openDemo,
  startWorkspace,
  type CallResult,
  type Workspace,
} from '../doors/page/browser-helpers.js';
import { launchChromium } from '../helpers/browser.js';
import { toolJson } from '../helpers/results.js';
import type { Approval } from '../../src/kernel/records.js';

let ws: Workspace;
let browser: Browser;
let page: Page;
let client: Client;
let origin: string;

type Win = {
  bridge: {
    setPermissions(f: Record<string, boolean>): void;
    action(name: string, def: Record<string, unknown>): void;
    setConfirmHandler(fn: () => boolean): void;
  };
  wu: { store: { set(path: string, value: unknown): void; get(path: string): unknown } };
};

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;

async function askOf(result: CallResult): Promise<Approval> {
  const { approvalID, code } = toolJson(result) as { approvalID: string; code: string };
  expect(code).toBe('approvalRequired');
  return (await ws.tk.kernel.consent.pending()).find((a) => a.id === approvalID)!;
}

const storeValue = (path: string) =>
  page.evaluate((p) => (window as unknown as Win).wu.store.get(p), path);

beforeAll(async () => {
  [ws, browser] = await Promise.all([startWorkspace(), launchChromium()]);
  client = await mcpClient(ws);
  page = await openDemo(browser, ws);
  origin = new URL(ws.base).origin;
  await page.evaluate(() => {
    const w = window as unknown as Win;
    w.bridge.setPermissions({
      executeActions: true,
      modifyDOM: true,
      readStore: true,
      writeStore: true,
    });
    w.bridge.setConfirmHandler(() => true);
    w.bridge.action('cancel_booking', {
      description: 'Cancel the booking and refund the card.',
      parameters: { type: 'object', properties: { booking: { type: 'string' } } },
      confirm: true,
      handler: () => ({ cancelled: true }),
    });
    w.wu.store.set('cart', { items: 1 });
  });
});
afterAll(async () => {
  await client?.close();
  await browser?.close();
  await ws?.close();
});
afterEach(async () => {
  for (const r of (await ws.tk.kernel.policy.view()).rules) await ws.tk.kernel.policy.remove(r.id);
});

describe('page asks', () => {
  it('an action’s card shows its name, the page’s label for it and its parameters', async () => {
    const card = await askOf(
      await call('wu_execute_action', { action: 'cancel_booking', params: { booking: 'B-7' } }),
    );
    expect(card.preview).toMatchObject({
      action: 'cancel_booking',
      label: 'Cancel the booking and refund the card.',
      parameters: { booking: 'B-7' },
      page: origin,
    });
    // The line `approvals list` and the card lead with.
    expect((card.preview as { summary: string }).summary).toBe(
      `wu_execute_action cancel_booking ("Cancel the booking and refund the card.") on ${origin}`,
    );
  });

  it('a click’s card names the element it targets, and that element is its subject', async () => {
    await ws.tk.kernel.policy.add({ door: 'page', tool: 'wu_click', decision: 'ask' });
    const card = await askOf(await call('wu_click', { selector: '#buy', text: 'Buy now' }));
    expect(card.preview).toMatchObject({
      element: 'selector "#buy", text "Buy now"',
      subject: `element selector "#buy", text "Buy now" on ${origin}`,
      summary: `wu_click selector "#buy", text "Buy now" on ${origin}`,
    });
  });

  it('approved once, then the page changes the value: set_state is asked again, says what changed, writes nothing', async () => {
    await ws.tk.kernel.policy.add({ door: 'page', tool: 'wu_set_state', decision: 'ask' });
    const args = { path: 'cart.items', value: 5 };
    const first = await askOf(await call('wu_set_state', args));
    expect(first.preview).toMatchObject({
      path: 'cart.items',
      value: 5,
      subject: `state cart.items on ${origin}`,
    });
    expect((first.preview as { observed?: string }).observed).toMatch(/^value [0-9a-f]{12}$/);
    await ws.tk.kernel.asks.approve(first.id, 'once');

    // The owner (in the page) changes what the agent's write would overwrite.
    await page.evaluate(() => (window as unknown as Win).wu.store.set('cart.items', 2));

    const retried = await call('wu_set_state', args);
    const again = await askOf(retried);
    expect(again.id).not.toBe(first.id);
    expect(String((toolJson(retried) as { message: string }).message)).toContain(
      `changed after you approved request ${first.id}`,
    );
    expect((again.preview as { changed?: string }).changed).toMatch(/nothing ran/);
    expect(await storeValue('cart.items')).toBe(2);

    // Judged again: it runs.
    await ws.tk.kernel.asks.approve(again.id, 'once');
    expect((await call('wu_set_state', args)).isError).toBeFalsy();
    expect(await storeValue('cart.items')).toBe(5);
  });

  it('a secret written by set_state is redacted on the card', async () => {
    await ws.tk.kernel.policy.add({ door: 'page', tool: 'wu_set_state', decision: 'ask' });
    const card = await askOf(
      await call('wu_set_state', { path: 'auth.apiToken', value: 'sk-1234567890' }),
    );
    expect(JSON.stringify(card.preview)).not.toContain('sk-1234567890');
  });
});
