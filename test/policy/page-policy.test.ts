/**
 * The owner's policy on the page door in real Chromium (authority.md §3):
 * targets are `<page origin>:<action>`, and an action registered with
 * `confirm` is destructive, so by default the owner is asked first.
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
import type { ListedRule } from '../../src/kernel/authority/policy.js';

let ws: Workspace;
let browser: Browser;
let page: Page;
let client: Client;

type Win = {
  bridge: {
    setPermissions(f: Record<string, boolean>): void;
    action(name: string, def: Record<string, unknown>): void;
    setConfirmHandler(fn: () => boolean): void;
  };
  orders: string[];
};

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;
const orders = () => page.evaluate(() => (window as unknown as Win).orders);
const order = (item: string) =>
  call('wu_execute_action', { action: 'submit_order', params: { item } });

beforeAll(async () => {
  [ws, browser] = await Promise.all([startWorkspace(), launchChromium()]);
  client = await mcpClient(ws);
  page = await openDemo(browser, ws);
  await page.evaluate(() => {
    const w = window as unknown as Win;
    w.orders = [];
    w.bridge.setPermissions({ executeActions: true });
    // The page's own confirm step (WU's per-action confirm) says yes: only policy stands between.
    w.bridge.setConfirmHandler(() => true);
    w.bridge.action('submit_order', {
      description: 'Place an order.',
      parameters: { type: 'object', properties: { item: { type: 'string' } } },
      confirm: true,
      handler: ({ item }: { item: string }) => {
        w.orders.push(item);
        return { ordered: item };
      },
    });
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

describe('policy on the page door', () => {
  it('a rule `deny page:*:submit_order` stops the action with the rule’s reason; the page never runs it', async () => {
    const rule = (await ws.tk.kernel.policy.add({
      door: 'page',
      target: '*:submit_order',
      decision: 'deny',
      reason: 'only I place orders',
    })) as ListedRule;
    const r = await order('book');
    expect(r.isError).toBe(true);
    expect(toolJson(r)).toMatchObject({ code: 'notAuthorized' });
    expect(JSON.stringify(toolJson(r))).toContain('only I place orders');
    expect(JSON.stringify(toolJson(r))).toContain(rule.id);
    expect(await orders()).toEqual([]);
  });

  it('an action with confirm is destructive: by default it asks, and runs once the owner approves', async () => {
    const asked = await order('lamp');
    expect(asked.isError).toBe(true);
    const { approvalID } = toolJson(asked) as { approvalID: string };
    expect(toolJson(asked)).toMatchObject({ code: 'approvalRequired' });
    const pending = await ws.tk.kernel.consent.pending();
    const ask = pending.find((a) => a.id === approvalID)!;
    const origin = new URL(ws.base).origin;
    expect(ask).toMatchObject({ kind: 'policy', target: `${origin}:submit_order` });
    expect(ask.preview).toMatchObject({
      action: 'submit_order',
      parameters: { item: 'lamp' },
      page: origin,
    });
    expect(await orders()).toEqual([]);
    await ws.tk.kernel.asks.approve(approvalID, 'once');
    const ran = await order('lamp');
    expect(ran.isError).toBeFalsy();
    expect(await orders()).toEqual(['lamp']);
  });

  it('an action without confirm is a write and runs without asking', async () => {
    const r = await call('wu_execute_action', { action: 'sum_local', params: { a: 1, b: 2 } });
    expect(r.isError).toBeFalsy();
  });
});
