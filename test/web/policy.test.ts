/**
 * The owner's policy in the web UI against a real `airlock serve` (the
 * test-only `ledger` door, one rule from the config file), in headless
 * Chromium: a rule added on the Policy screen and tried with the tester,
 * the agent's call it asks about approved once from the inbox link (and
 * another denied with a reason), the audit trail filtered by decision and
 * rule, the owner's rules reordered, edited and deleted, and a door made
 * read-only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { launchChromium } from '../helpers/browser.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';
import { connectAgent, type Agent } from './mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-policy-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent;
/** The id of the rule the first test adds. */
let ruleId = '';

const config = join(dir, 'airlock.json');
writeFileSync(
  config,
  JSON.stringify({
    policy: { rules: [{ door: 'ledger', tool: 'ledger_count', decision: 'deny' }] },
  }),
);

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', dir, '--config', config]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/policy`, { login: served.loginUrl! });
  agent = await connectAgent(served.url, 'policy-web-agent', served.agentToken!);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: policy', () => {
  it('adds a rule on the Policy screen, lists it, and the tester shows the decision it makes', async () => {
    const { page } = ui;
    await page.getByRole('heading', { level: 1, name: 'Policy' }).waitFor();
    const add = page.getByRole('form', { name: 'Add a rule' });
    await add.getByLabel('Decision').selectOption('ask');
    await add.getByLabel('Door').fill('ledger');
    await add.getByLabel('Tool').fill('ledger_echo');
    await add.getByLabel('Reason').fill('echoes wait for me');
    await add.getByRole('button', { name: 'Add rule' }).click();
    await add.getByText('Added as rule 2.').waitFor();

    const cards = page.locator('#policy-rules > li');
    await expect.poll(() => cards.count()).toBe(2);
    const fromFile = cards.first();
    await expect(fromFile.locator('h3').textContent()).resolves.toBe(
      '1. deny door ledger · tool ledger_count',
    );
    await expect(fromFile.locator('.source').textContent()).resolves.toBe('config file');
    await expect(fromFile.getByRole('button').count()).resolves.toBe(0);
    const card = cards.nth(1);
    ruleId = (await card.getAttribute('data-rule-id'))!;
    expect(ruleId).toMatch(/^r-[0-9a-f]{8}$/);
    await expect(card.locator('h3').textContent()).resolves.toBe(
      '2. ask door ledger · tool ledger_echo',
    );
    await expect(card.locator('.source').textContent()).resolves.toBe('yours');
    // The first of the owner's rules cannot move above the config file's.
    await expect(card.getByRole('button', { name: 'Move rule 2 up' }).isDisabled()).resolves.toBe(
      true,
    );
    await expect(page.locator('#policy-defaults').textContent()).resolves.toBe(
      'read callsallowwrite callsallowdestructive callsask',
    );

    const tester = page.getByRole('form', { name: 'What would happen' });
    await tester.getByLabel('Door').fill('ledger');
    await tester.getByLabel('Tool', { exact: true }).fill('ledger_echo');
    await tester.getByLabel('Agent').fill('default');
    await tester.getByRole('button', { name: 'Test' }).click();
    const result = page.locator('#policy-test-result');
    await expect.poll(() => result.getAttribute('data-decision')).toBe('ask');
    await expect(result.textContent()).resolves.toBe(
      `ask by rule 2 (${ruleId}): echoes wait for me (a read call)`,
    );
    await tester.getByLabel('Tool', { exact: true }).fill('ledger_read');
    await tester.getByRole('button', { name: 'Test' }).click();
    await expect
      .poll(() => result.textContent())
      .toBe('allow by default for read calls (a read call)');
    // The call's arguments, when given, decide the tool's effect and targets as a real call's do.
    await tester.getByLabel('Tool', { exact: true }).fill('ledger_echo');
    await tester.getByLabel('Arguments').fill('{"text": "hi"}');
    await tester.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => result.getAttribute('data-decision')).toBe('ask');
    await tester.getByLabel('Arguments').fill('not json');
    await tester.getByRole('button', { name: 'Test' }).click();
    await expect
      .poll(() => tester.getByRole('alert').textContent())
      .toMatch(/Arguments must be a JSON object/);
    await tester.getByLabel('Arguments').fill('');
    await screenshots(ui, 'policy');
  });

  it('refuses on the Policy screen a rule that can never match, naming the tool meant', async () => {
    const { page } = ui;
    const add = page.getByRole('form', { name: 'Add a rule' });
    await add.getByLabel('Decision').selectOption('deny');
    await add.getByLabel('Door').fill('ledger');
    await add.getByLabel('Tool').fill('ledger_apend');
    await add.getByRole('button', { name: 'Add rule' }).click();
    await expect
      .poll(() => add.getByRole('alert').textContent())
      .toMatch(/No tool of ledger is named like `ledger_apend`; did you mean `ledger_append`\?/);
    await expect(page.locator('#policy-rules > li').count()).resolves.toBe(2);
    await add.getByLabel('Tool').fill('');
    // The browser logs the refused request (400); that one is expected here.
    const refused = ui.errors.filter((e) => /\b400\b/.test(e));
    expect(refused).toHaveLength(1);
    ui.errors.splice(ui.errors.indexOf(refused[0]!), 1);
  });

  it("approves the agent's asked call once from the inbox link, and the retried call runs", async () => {
    const { page } = ui;
    const asked = await agent.call('ledger_echo', { text: 'hello owner' });
    expect(asked.body.code).toBe('approvalRequired');
    const id = String(asked.body.approvalID);

    // The URL-elicitation link opens the inbox with this request highlighted.
    await go(ui, `approvals/${id}`, 'Approvals');
    const card = page.locator(`[data-approval-id="${id}"]`);
    await card.waitFor();
    await expect.poll(() => card.getAttribute('class')).toContain('highlight');
    await expect(card.getByRole('heading').textContent()).resolves.toBe(
      'Policy ask: ledger_echo on ledger',
    );
    await expect(card.locator('.agent').textContent()).resolves.toBe('default');
    await expect(card.locator('a.rule').getAttribute('href')).resolves.toBe(`#/policy/${ruleId}`);
    await expect(card.locator('.preview-summary').textContent()).resolves.toBe(
      'ledger_echo (read)',
    );
    await expect(card.locator('[data-detail="arguments"] pre').textContent()).resolves.toBe(
      '{\n  "text": "hello owner"\n}',
    );
    // Each approve button says what it lets through (the ledger echo has no target string).
    await expect(card.locator('[data-scope="once"] .scope').textContent()).resolves.toBe(
      'Only this call',
    );
    await expect(card.locator('[data-scope="15m"] .scope').textContent()).resolves.toBe(
      `Every call by default that rule ${ruleId} asks about (any tool) for 15 minutes`,
    );
    // Narrowed to what the door names (the ledger's echo: its text), in words.
    await expect(card.locator('[data-scope="15m-subject"] .scope').textContent()).resolves.toBe(
      'Only calls on text hello owner by default for 15 minutes',
    );
    await screenshots(ui, 'approvals-policy-ask');

    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    const ran = await agent.call('ledger_echo', { text: 'hello owner' });
    expect(ran).toEqual({ body: { text: 'hello owner' }, isError: false });
  });

  it('denies an asked call with a reason the agent sees', async () => {
    const { page } = ui;
    const asked = await agent.call('ledger_echo', { text: 'again' });
    const card = page.locator(`[data-approval-id="${String(asked.body.approvalID)}"]`);
    await card.getByLabel('Reason if you deny').fill('not now');
    await card.getByRole('button', { name: 'Deny', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    const denied = await agent.call('ledger_echo', { text: 'again' });
    expect(denied.body).toMatchObject({ code: 'approvalDenied', reason: 'not now' });
  });

  it('filters the audit trail by decision and by rule, showing both columns', async () => {
    const { page } = ui;
    expect((await agent.call('ledger_count', { to: 1 })).body.code).toBe('notAuthorized');
    await go(ui, 'audit', 'Audit');
    const rows = page.locator('#audit-rows tr');
    const column = (label: string) => rows.locator(`td[data-label="${label}"]`).allTextContents();
    await page.locator('#audit-decision').selectOption('ask');
    await expect.poll(() => rows.count()).toBe(4);
    await expect(column('Decision')).resolves.toEqual(['ask', 'ask', 'ask', 'ask']);
    await expect(column('Result')).resolves.toEqual([
      'approvalDenied',
      'approvalRequired',
      'ok',
      'approvalRequired',
    ]);
    await page.locator('#audit-decision').selectOption('deny');
    await expect.poll(() => column('Rule')).toEqual(['config-1']);
    await page.locator('#audit-decision').selectOption('');
    await page.locator('#audit-rule').selectOption(ruleId);
    await expect.poll(() => column('Rule')).toEqual([ruleId, ruleId, ruleId, ruleId]);
    await page.locator('#audit-decision').selectOption('deny');
    await expect.poll(() => rows.count()).toBe(0);
    await screenshots(ui, 'audit-policy');
  });

  it("lists a rule's recent decisions, and moves, edits and deletes the owner's rules", async () => {
    const { page } = ui;
    await go(ui, 'policy', 'Policy');
    const cards = page.locator('#policy-rules > li');
    await cards.nth(1).getByText('Recent decisions').click();
    await expect.poll(() => cards.nth(1).locator('.recent-list li').count()).toBe(4);

    const add = page.getByRole('form', { name: 'Add a rule' });
    await add.getByLabel('Decision').selectOption('deny');
    await add.getByLabel('Door').fill('ledger');
    await add.getByLabel('Tool').fill('ledger_read');
    await add.getByRole('button', { name: 'Add rule' }).click();
    await expect.poll(() => cards.count()).toBe(3);

    await page.getByRole('button', { name: 'Move rule 3 up' }).click();
    await expect
      .poll(() => cards.nth(1).locator('.match').textContent())
      .toBe('door ledger · tool ledger_read');
    // The expander stayed open on the rule it belongs to.
    await expect(cards.nth(2).locator('details').getAttribute('open')).resolves.toBe('');

    await page.getByRole('button', { name: 'Edit rule 2' }).click();
    const edit = page.getByRole('form', { name: 'Edit rule 2' });
    await edit.getByLabel('Reason').fill('reads are closed');
    await edit.getByLabel('Rate per agent').fill('5/minute');
    await edit.getByRole('button', { name: 'Save rule' }).click();
    await expect
      .poll(() => cards.nth(1).locator('.reason').textContent())
      .toBe('Reason: reads are closed');
    await expect(cards.nth(1).locator('.meta').first().textContent()).resolves.toMatch(
      /at most 5\/minute per agent$/,
    );
    await screenshots(ui, 'policy-rules');

    await page.getByRole('button', { name: 'Delete rule 2' }).click();
    await cards.nth(1).getByRole('button', { name: 'Delete rule 2' }).click();
    await expect.poll(() => cards.count()).toBe(2);
    await expect(cards.nth(1).getAttribute('data-rule-id')).resolves.toBe(ruleId);
  });

  it('makes a door read-only, and the tester then denies its writes', async () => {
    const { page } = ui;
    const form = page.getByRole('form', { name: 'Read-only' });
    await form.getByLabel('ledger', { exact: true }).check();
    await form.getByRole('button', { name: 'Save read-only' }).click();
    await form.getByText('In force: ledger is read-only.').waitFor();
    const tester = page.getByRole('form', { name: 'What would happen' });
    await tester.getByLabel('Door').fill('ledger');
    await tester.getByLabel('Tool', { exact: true }).fill('ledger_append');
    await tester.getByRole('button', { name: 'Test' }).click();
    await expect
      .poll(() => page.locator('#policy-test-result').textContent())
      .toBe('deny by read-only: the owner made ledger read-only (a write call)');
    await form.getByLabel('ledger', { exact: true }).uncheck();
    await form.getByRole('button', { name: 'Save read-only' }).click();
    await form.getByText('In force: nothing is read-only.').waitFor();
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });
  it('turns "Always allow" on a card into a rule: the next identical call runs unasked, the rule shows its origin, and removing it restores the ask', async () => {
    const { page } = ui;
    const asked = await agent.call('ledger_echo', { text: 'always fine' });
    expect(asked.body.code).toBe('approvalRequired');
    const id = String(asked.body.approvalID);
    await go(ui, 'approvals', 'Approvals');
    const card = page.locator(`[data-approval-id="${id}"]`);
    await expect(card.locator('[data-scope="always-allow"] .scope').textContent()).resolves.toBe(
      'Every ledger_echo call on ledger by default, from now on (a rule you can remove)',
    );
    await card.getByRole('button', { name: /^Always allow/ }).click();
    await card.waitFor({ state: 'detached' });

    for (const text of ['always fine', 'always fine', 'something else'])
      expect(await agent.call('ledger_echo', { text })).toEqual({ body: { text }, isError: false });

    // Listed first among the owner's rules, saying where it came from.
    await go(ui, 'policy', 'Policy');
    const made = page.locator('#policy-rules > li').nth(1);
    await expect.poll(() => made.getAttribute('data-decision')).toBe('allow');
    await expect(made.locator('.match').textContent()).resolves.toBe(
      'door ledger · tool ledger_echo · agent default',
    );
    await expect(made.locator('.origin').textContent()).resolves.toBe(
      `made from the inbox (request ${id.slice(0, 8)}…)`,
    );
    await screenshots(ui, 'policy-rule-from-inbox');

    // One click undoes it: the owner's ask rule decides again.
    await made.getByRole('button', { name: 'Undo rule 2' }).click();
    await expect.poll(() => made.getAttribute('data-rule-id')).toBe(ruleId);
    expect((await agent.call('ledger_echo', { text: 'after undo' })).body.code).toBe(
      'approvalRequired',
    );
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });

  it('"Approve this one 15 minutes" lets the same subject through and asks for another (issue 27)', async () => {
    const { page } = ui;
    const asked = await agent.call('ledger_echo', { text: 'narrow me' });
    await go(ui, `approvals/${String(asked.body.approvalID)}`, 'Approvals');
    const card = page.locator(`[data-approval-id="${String(asked.body.approvalID)}"]`);
    await card.getByRole('button', { name: 'Approve this one 15 minutes' }).click();
    await card.waitFor({ state: 'detached' });
    expect((await agent.call('ledger_echo', { text: 'narrow me' })).isError).toBe(false);
    expect((await agent.call('ledger_echo', { text: 'narrow me' })).isError).toBe(false);
    const other = await agent.call('ledger_echo', { text: 'something else' });
    expect(other.body.code).toBe('approvalRequired');
    const otherCard = page.locator(`[data-approval-id="${String(other.body.approvalID)}"]`);
    await otherCard.getByRole('button', { name: 'Deny', exact: true }).click();
    await otherCard.waitFor({ state: 'detached' });
  });
});
