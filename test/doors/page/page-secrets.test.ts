/**
 * What the page keeps from an agent, in Chromium: secrets by meaning wherever
 * they are reached, what a permission withholds, look-alike action names, and
 * the parts of a page its owner keeps for themselves.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

let ws: Workspace;
let browser: Browser;
let page: Page;
let client: Client;

const SECRET = 'sk-live-0123456789abcdef';
const ALL_ON = {
  executeActions: true,
  readStore: true,
  writeStore: true,
  emitEvents: true,
  readDOM: true,
  modifyDOM: true,
  readDiagnostics: true,
};
type Win = { bridge: { setPermissions(f: Record<string, boolean>): void } };

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as unknown as CallResult;
const permit = (flags: Record<string, boolean>) =>
  page.evaluate((f) => (window as unknown as Win).bridge.setPermissions(f), flags);
/** Puts `html` in a fresh section of the demo page. */
const show = (html: string) =>
  page.evaluate((markup) => {
    document.querySelector('#probe')?.remove();
    const section = document.createElement('section');
    section.id = 'probe';
    section.setAttribute('aria-label', 'Probe');
    section.innerHTML = markup;
    document.body.append(section);
  }, html);

beforeAll(async () => {
  [ws, browser] = await Promise.all([startWorkspace(), launchChromium()]);
  client = await mcpClient(ws);
  page = await openDemo(browser, ws);
});
afterAll(async () => {
  await client?.close();
  await browser?.close();
  await ws?.close();
});
beforeEach(async () => {
  await permit(ALL_ON);
});

describe('secrets by meaning, wherever they are reached', () => {
  it('wu_get_state by the path of a secret-named key answers [REDACTED]', async () => {
    await page.evaluate((secret) => {
      const w = window as unknown as { wu: { store: { set(p: string, v: unknown): void } } };
      w.wu.store.set('user', { name: 'Ada', apiToken: secret, auth: { password: secret } });
    }, SECRET);
    for (const path of ['user.apiToken', 'user.auth.password', 'user.auth']) {
      const r = await call('wu_get_state', { path });
      expect(JSON.stringify(r), path).not.toContain(SECRET);
    }
    expect(toolJson(await call('wu_get_state', { path: 'user.apiToken' }))).toEqual({
      path: 'user.apiToken',
      value: '[REDACTED]',
    });
    expect(toolJson(await call('wu_get_state', { path: 'user.name' })).value).toBe('Ada');
  });

  it('the wu_set_state echo and events redact a secret-named path or event', async () => {
    const set = await call('wu_set_state', { path: 'user.apiToken', value: SECRET });
    expect(toolJson(set)).toEqual({ path: 'user.apiToken', value: '[REDACTED]', updated: true });
    const emitted = await call('wu_emit_event', { event: 'agent:session-token', data: SECRET });
    expect(JSON.stringify(emitted)).not.toContain(SECRET);
    const events = await call('wu_list_events', { limit: 200 });
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it('snapshots redact fields by autocomplete, name, id and label, not only type=password', async () => {
    await show(`
      <label>Shown password <input type="text" autocomplete="current-password" value="${SECRET}-a"></label>
      <label>New <input autocomplete="section-x new-password" value="${SECRET}-b"></label>
      <label>Card <input autocomplete="cc-number" value="${SECRET}-c"></label>
      <label>CVC <input autocomplete="billing cc-csc" value="${SECRET}-d"></label>
      <label>Code <input autocomplete="one-time-code" value="${SECRET}-e"></label>
      <textarea id="secret">${SECRET}-f</textarea>
      <label>Pick <select name="session"><option value="${SECRET}-g" selected>${SECRET}-g</option></select></label>
      <div contenteditable="true" aria-label="Password"><b>${SECRET}-h</b> and ${SECRET}-i</div>
      <label>City <input id="city" value="Lisbon"></label>`);
    const snap = await call('wu_snapshot', { selector: '#probe' });
    expect(snap.isError).toBeFalsy();
    const text = JSON.stringify(toolJson(snap));
    for (const suffix of 'abcdefghi') expect(text, suffix).not.toContain(`${SECRET}-${suffix}`);
    expect(text).toContain('Lisbon');
    expect(text.match(/\[REDACTED\]/g)?.length).toBeGreaterThanOrEqual(7);
  });

  it('wu_network shows no CSRF header value', async () => {
    await page.evaluate(
      (secret) =>
        fetch('/healthz?probe=csrf', {
          headers: { 'x-airlock-csrf': secret, 'x-xsrf-token': secret },
        }),
      SECRET,
    );
    const net = toolJson(await call('wu_network', { limit: 500 }));
    const req = (net.requests as { url: string; requestHeaders: Record<string, string> }[]).find(
      (x) => x.url.includes('probe=csrf'),
    )!;
    expect(req.requestHeaders['x-airlock-csrf']).toBe('[REDACTED]');
    expect(JSON.stringify(net)).not.toContain(SECRET);
  });
});

describe('permissions mean what they say', () => {
  it('without readDOM, wu_type and wu_click answer success or failure only', async () => {
    await show(`<label>Field <input id="field" value="${SECRET}"></label>
      <button id="named">Launch the secret plan</button>`);
    await permit({ ...ALL_ON, readDOM: false });
    const typed = await call('wu_type', { selector: '#field', text: 'x' });
    expect(typed.isError).toBeFalsy();
    expect(toolJson(typed)).toEqual({ typed: 1, cleared: false, submitted: false });
    const clicked = await call('wu_click', { selector: '#named' });
    expect(toolJson(clicked)).toEqual({ clicked: true });
    // Finding an element by its text reads the page: no existence oracle.
    const byText = await call('wu_click', { text: 'Launch the secret plan' });
    expect(byText.isError).toBe(true);
    expect(toolJson(byText).code).toBe('WU_PERMISSION_DENIED');
    // With readDOM the answers describe the element again.
    await permit(ALL_ON);
    expect(toolJson(await call('wu_click', { selector: '#named' })).element).toMatchObject({
      name: 'Launch the secret plan',
    });
  });
});

describe('look-alike action names', () => {
  const register = (name: string) =>
    page.evaluate((n) => {
      const w = window as unknown as {
        bridge: { action(n: string, d: unknown): () => void };
      };
      try {
        w.bridge.action(n, { handler: () => 'ran' });
        return 'registered';
      } catch (e) {
        return (e as { code?: string }).code ?? String(e);
      }
    }, name);

  it('a page cannot register two actions equal after folding, nor a name mixing Latin with look-alike scripts', async () => {
    expect(await register('submit_order')).toBe('registered');
    for (const twin of [
      'Submit_Order',
      'submit_order ',
      'submit_order\u200b',
      'ＳＵＢＭＩＴ_ＯＲＤＥＲ',
    ])
      expect(await register(twin), twin).toBe('WU_INVALID_ACTION');
    expect(await register('\u0455ubmit_order')).toBe('WU_INVALID_ACTION');
    // Re-registering the very same name still replaces it.
    expect(await register('submit_order')).toBe('registered');
  });

  it('an action is reached by its folded name', async () => {
    const r = await call('wu_execute_action', { action: 'SUM_LOCAL', params: { a: 1, b: 2 } });
    expect(toolJson(r)).toMatchObject({ success: true, result: { sum: 3 } });
  });
});

describe('what the page keeps for its owner', () => {
  it('elements marked data-wu-private, or data-wu-agent for another agent, never reach the agent', async () => {
    await show(`
      <p data-wu-private>Private note ${SECRET}-p</p>
      <ul>
        <li data-wu-agent="someone-else"><button>Other agent's request ${SECRET}-o</button></li>
        <li data-wu-agent="page-e2e"><button id="mine">My own request</button></li>
      </ul>`);
    const text = JSON.stringify(toolJson(await call('wu_snapshot', { selector: '#probe' })));
    expect(text).toContain('My own request');
    expect(text).not.toContain(`${SECRET}-p`);
    expect(text).not.toContain(`${SECRET}-o`);
    const other = await call('wu_click', { text: "Other agent's request" });
    expect(toolJson(other).code).toBe('WU_ELEMENT_NOT_FOUND');
    const bySelector = await call('wu_click', {
      selector: '[data-wu-agent="someone-else"] button',
    });
    expect(toolJson(bySelector).code).toBe('WU_ELEMENT_NOT_FOUND');
    expect(toolJson(await call('wu_click', { selector: '#mine' })).clicked).toBe(true);
  });

  it('an agent cannot click or type into a control marked data-wu-owner', async () => {
    await show(`
      <form data-wu-owner><label>Rule <input id="rule"></label><button id="save">Save</button></form>
      <button id="delete" data-wu-owner>Delete rule</button>`);
    await page.evaluate(() => {
      (window as unknown as { clicks: number }).clicks = 0;
      for (const b of document.querySelectorAll('#probe button'))
        b.addEventListener('click', (e) => {
          e.preventDefault();
          (window as unknown as { clicks: number }).clicks++;
        });
    });
    for (const [tool, args] of [
      ['wu_click', { selector: '#delete' }],
      ['wu_click', { selector: '#save' }],
      ['wu_click', { text: 'Delete rule' }],
      ['wu_type', { selector: '#rule', text: 'x', submit: true }],
    ] as const) {
      const r = await call(tool, args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(toolJson(r).code).toBe('WU_PERMISSION_DENIED');
    }
    expect(await page.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBe(0);
    expect(await page.locator('#rule').inputValue()).toBe('');
  });
});
