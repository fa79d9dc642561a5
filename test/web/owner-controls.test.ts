/**
 * The owner's own web UI driven by an agent through the page bridge, with both
 * switches on ("Let agents drive this page", "Also let them click and type"):
 * no owner control acts on an agent's click — nor on a script's click that
 * never went through the bridge — and an agent sees only its own requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { go, openUi, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { connectAgent, type Agent } from './mcp.js';
import { serverBin } from '../doors/mcp/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-owner-controls-'));
const files = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-web-owner-controls-fs-')));
let served: Served;
let browser: Browser;
let ui: UiPage;
/** The agent `default` driving the page. */
let pageAgent: Agent;
/** Another agent, `rival`, whose requests wait in the same inbox. */
let rivalPage: Agent;
let rivalLedger: Agent;

const owner = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${served.url}/api/v1/${path}`, {
    method,
    headers: {
      authorization: `Bearer ${served.ownerToken}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await res.json()) as Record<string, unknown>;
};

/** Everything an owner control could change, as the server sees it. */
const ownerState = async () => {
  const policy = await owner('GET', 'policy');
  const approvals = (await owner('GET', 'approvals')).approvals as { id: string }[];
  const grants = (await owner('GET', 'grants')).grants as { id: string }[];
  const upstreams = (await owner('GET', 'upstreams')).upstreams as {
    tools: { upstreamTool: string; effect: string; source: string }[];
  }[];
  const agents = (await owner('GET', 'agents')).agents as { name: string; revokedAt: unknown }[];
  return {
    agents: agents.map((a) => `${a.name}:${String(a.revokedAt)}`),
    rules: (policy.rules as { id: string; position: number; decision: string }[]).map((r) => [
      r.id,
      r.position,
      r.decision,
    ]),
    readOnly: policy.readOnly,
    approvals: approvals.map((a) => a.id).sort(),
    grants: grants.map((g) => g.id).sort(),
    effects: upstreams[0]!.tools.map((t) => `${t.upstreamTool}:${t.effect}:${t.source}`),
    bridge: await ui.page.evaluate(() => [
      localStorage.getItem('airlock.bridge'),
      localStorage.getItem('airlock.bridge.modifyDOM'),
    ]),
    signedIn: await ui.page.evaluate(async () => (await fetch('/api/v1/session')).ok),
  };
};

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe([
      '--doors',
      'page,ledger',
      '--relay-port',
      '0',
      '--data',
      dir,
      '--upstream',
      `fs=${process.execPath} ${serverBin('filesystem')} ${files}`,
    ]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/settings`, { login: served.loginUrl! });
  const rival = (await owner('POST', 'agents', { name: 'rival' })) as { token: string };
  pageAgent = await connectAgent(served.url, 'page-agent', served.agentToken!, '/mcp/page');
  rivalPage = await connectAgent(served.url, 'rival-page', rival.token, '/mcp/page');
  rivalLedger = await connectAgent(served.url, 'rival-ledger', rival.token);
  const defaultLedger = await connectAgent(served.url, 'default-ledger', served.agentToken!);

  // Two owner rules; one asks before wu_status, so each agent has a request waiting.
  await owner('POST', 'policy/rules', { tool: 'wu_status', decision: 'ask' });
  await owner('POST', 'policy/rules', { tool: 'nothing_*', decision: 'deny', reason: 'never' });
  // A grant (the default agent's, approved) and the rival's consent request, pending.
  const mine = await defaultLedger.call('ledger_request_write_access');
  await owner('POST', `approvals/${String(mine.body.approvalID)}/approve`, {});
  await defaultLedger.close();
  await rivalLedger.call('ledger_request_write_access');

  // Both switches on, by the owner's own hand.
  const { page } = ui;
  await page.getByLabel('Let agents drive this page').check();
  await page.getByLabel('Also let them click and type').check();
  await page.locator('#bridge-status[data-state="authenticated"]').waitFor();
  await pageAgent.call('wu_status');
  await rivalPage.call('wu_status');
}, 90_000);

afterAll(async () => {
  await pageAgent?.close();
  await rivalPage?.close();
  await rivalLedger?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

/** The owner controls of each screen: the agent's `wu_click` text, and the element itself. */
const CONTROLS: [screen: string, heading: string, controls: [string, (ui: UiPage) => Locator][]][] =
  [
    [
      'policy',
      'Policy',
      [
        ['Move rule 2 up', (u) => u.page.getByRole('button', { name: 'Move rule 2 up' })],
        ['Move rule 1 down', (u) => u.page.getByRole('button', { name: 'Move rule 1 down' })],
        ['Edit rule 1', (u) => u.page.getByRole('button', { name: 'Edit rule 1' })],
        ['Delete rule 1', (u) => u.page.getByRole('button', { name: 'Delete rule 1' })],
        ['Add rule', (u) => u.page.getByRole('button', { name: 'Add rule' })],
        ['The whole workspace', (u) => u.page.getByLabel('The whole workspace')],
        ['Save read-only', (u) => u.page.getByRole('button', { name: 'Save read-only' })],
      ],
    ],
    [
      'approvals',
      'Approvals',
      [
        ['Approve once', (u) => u.page.getByRole('button', { name: 'Approve once' })],
        ['Approve 15 minutes', (u) => u.page.getByRole('button', { name: 'Approve 15 minutes' })],
        ['Deny', (u) => u.page.getByRole('button', { name: 'Deny' }).first()],
        ['Always allow', (u) => u.page.getByRole('button', { name: /^Always allow/ })],
        ['Always deny', (u) => u.page.getByRole('button', { name: /^Always deny/ })],
        // A grant names no agent by itself: kept from every agent, so not even found.
        ['Revoke', (u) => u.page.getByRole('button', { name: /^Revoke/ })],
      ],
    ],
    [
      'agents',
      'Agents',
      [
        ['Add agent', (u) => u.page.getByRole('button', { name: 'Add agent' })],
        // The agents' list is kept from every agent: not even found.
        ['Revoke default', (u) => u.page.getByRole('button', { name: 'Revoke default' })],
      ],
    ],
    [
      'upstreams',
      'Upstreams',
      [['Effect of fs_write_file', (u) => u.page.getByLabel('Effect of fs_write_file')]],
    ],
    [
      'settings',
      'Settings',
      [
        ['Let agents drive this page', (u) => u.page.getByLabel('Let agents drive this page')],
        ['Also let them click and type', (u) => u.page.getByLabel('Also let them click and type')],
        ['Sign out', (u) => u.page.getByRole('button', { name: 'Sign out' })],
      ],
    ],
  ];

describe("web UI: the owner's controls are not an agent's to use", () => {
  it('an agent-driven click on each owner control is refused and changes nothing', async () => {
    const before = await ownerState();
    for (const [screen, heading, controls] of CONTROLS) {
      await go(ui, screen, heading);
      for (const [name, locate] of controls) {
        await locate(ui).first().waitFor();
        const clicked = await pageAgent.call(
          'wu_click',
          name.startsWith('Effect of')
            ? { selector: 'select[data-tool="write_file"]' }
            : { text: name },
        );
        expect(clicked.isError, `${screen}: ${name}`).toBe(true);
        expect(clicked.body.code, `${screen}: ${name}`).toBe(
          name.startsWith('Revoke') ? 'WU_ELEMENT_NOT_FOUND' : 'WU_PERMISSION_DENIED',
        );
      }
    }
    // Typing a reason and submitting, in the agent's own card, is refused too.
    await go(ui, 'approvals', 'Approvals');
    const typed = await pageAgent.call('wu_type', {
      selector: 'input[name="reason"]',
      text: 'agent says no',
      submit: true,
    });
    expect(typed.body.code).toBe('WU_PERMISSION_DENIED');
    expect(await ownerState()).toEqual(before);
  });

  it("a script's click on each owner control — never through the bridge — changes nothing either", async () => {
    const before = await ownerState();
    for (const [screen, heading, controls] of CONTROLS) {
      await go(ui, screen, heading);
      for (const [name, locate] of controls) {
        const el = locate(ui).first();
        await el.waitFor();
        if (name.startsWith('Effect of'))
          await el.evaluate((s: HTMLSelectElement) => {
            s.value = 'write';
            s.dispatchEvent(new Event('change', { bubbles: true }));
          });
        else await el.evaluate((b: HTMLElement) => b.click());
      }
    }
    // A form a script submits (as wu_type {submit: true} does) is not sent.
    await go(ui, 'policy', 'Policy');
    await ui.page.evaluate(() => {
      for (const form of document.querySelectorAll('form')) form.requestSubmit();
    });
    expect(await ownerState()).toEqual(before);
  });

  it('an agent sees only its own requests: snapshot, state and workspace_status', async () => {
    await go(ui, 'approvals', 'Approvals');
    await ui.page.locator('[data-approval-id]').nth(2).waitFor();
    const snap = await pageAgent.call('wu_snapshot', {});
    const text = JSON.stringify(snap.body);
    expect(snap.isError).toBe(false);
    // Its own policy ask is there, the rival's ask and consent request are not.
    const cards: string[] = [];
    const walk = (nodes: { role: string; name?: string; children?: unknown[] }[]) => {
      for (const n of nodes) {
        if (n.role === 'listitem' && /Policy ask|access/.test(n.name ?? '')) cards.push(n.name!);
        walk((n.children ?? []) as typeof nodes);
      }
    };
    walk(snap.body.tree as Parameters<typeof walk>[0]);
    expect(cards).toEqual(['Policy ask: wu_status on page']);
    expect(text).toContain('default');
    expect(text).not.toContain('rival');
    expect(text).not.toContain('ledger: write access');
    const state = JSON.stringify((await pageAgent.call('wu_get_state', { path: '' })).body);
    expect(state).not.toContain('ledger');
    const status = await pageAgent.call('wu_execute_action', { action: 'workspace_status' });
    const pending = (status.body.result as { pendingApprovals: { door: string }[] })
      .pendingApprovals;
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ door: 'page' });
  });

  it("the owner's own clicks still work", async () => {
    const { page } = ui;
    await go(ui, 'policy', 'Policy');
    await page.getByRole('button', { name: 'Delete rule 2' }).click();
    await page.getByRole('button', { name: 'Delete rule 2' }).click();
    await expect
      .poll(async () => ((await owner('GET', 'policy')).rules as unknown[]).length)
      .toBe(1);
    expect(ui.errors).toEqual([]);
  });
});
