/**
 * The owner's passkeys (issue 25) against a real `airlock serve` in headless
 * Chromium with a CDP virtual authenticator (CTAP2, internal, resident keys,
 * user verification on): enrol, sign out, sign in with the passkey; an
 * approval needs a fresh assertion bound to that very decision, so no other
 * credential approves, an assertion for one approval cannot approve another,
 * and an assertion is accepted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startServe, type Served } from '../helpers/servers.js';
import { launchChromium } from '../helpers/browser.js';
import { collectErrors } from './browser.js';
import { connectAgent, type Agent } from './mcp.js';
import { BIN, run, testEnv } from '../helpers/cli.js';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { toolBody } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-passkeys-'));
let served: Served;
let browser: Browser;
let agent: Agent;
let context: BrowserContext;
let page: Page;
let errors: string[];

beforeAll(async () => {
  const config = join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      policy: { rules: [{ door: 'ledger', tool: 'ledger_count', decision: 'ask' }] },
    }),
  );
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger', '--data', join(dir, 'data'), '--config', config]),
    launchChromium(),
  ]);
  agent = await connectAgent(served.url, 'passkey-test-agent', served.agentToken!);
  context = await browser.newContext();
  page = await context.newPage();
  errors = collectErrors(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const signInScreen = () => page.getByRole('heading', { level: 1, name: 'Sign in' });

/** The session header this tab keeps (what a copy of it would hold). */
async function sessionHeader(): Promise<Record<string, string>> {
  const { header, secret } = JSON.parse(
    (await page.evaluate(() => sessionStorage.getItem('airlock.ownerSession')))!,
  ) as { header: string; secret: string };
  return { [header]: secret };
}

/**
 * A passkey assertion made in the page for `POST path body`, as the
 * x-airlock-presence value (a string script: the page imports the served
 * WebAuthn module itself, which the test runner must not rewrite).
 */
function assertionFor(path: string, body: unknown): Promise<string> {
  return page.evaluate(`(async () => {
    const { header, secret } = JSON.parse(sessionStorage.getItem('airlock.ownerSession'));
    const res = await fetch('/api/v1/presence/challenge', {
      method: 'POST',
      headers: { [header]: secret, 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'POST', path: ${JSON.stringify(path)}, body: ${JSON.stringify(body)} }),
    });
    if (!res.ok) throw new Error('challenge: ' + res.status + ' ' + (await res.text()));
    const lib = await import('/ui/vendor/simplewebauthn/index.js');
    const assertion = await lib.startAuthentication({ optionsJSON: await res.json() });
    return btoa(JSON.stringify(assertion)).split('+').join('-').split('/').join('_').split('=').join('');
  })()`);
}

/** `POST /api/v1/approvals/{id}/approve` from the test with the given headers. */
const approve = (id: string, headers: Record<string, string>, body: unknown = { scope: 'once' }) =>
  fetch(`${served.url}/api/v1/approvals/${encodeURIComponent(id)}/approve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: served.url, ...headers },
    body: JSON.stringify(body),
  });

async function pendingIds(): Promise<string[]> {
  const res = await fetch(`${served.url}/api/v1/approvals`, {
    headers: { authorization: `Bearer ${served.ownerToken!}` },
  });
  return ((await res.json()) as { approvals: { id: string }[] }).approvals.map((a) => a.id);
}

describe('web UI: passkeys', () => {
  it('the UI is linked as localhost, so a passkey can be made for it', () => {
    expect(served.loginUrl).toMatch(/^http:\/\/localhost:\d+\/login#code=/);
  });

  it('enrols a passkey after the first sign-in, then signs out and back in with it', async () => {
    await page.goto(served.loginUrl!);
    await page.locator('#live[data-state="live"]').waitFor();
    await page.evaluate(() => (location.hash = '#/settings'));
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    await page.getByLabel('Passkey name').fill('laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.locator('#passkey-list li', { hasText: 'laptop' }).waitFor();
    await expect(page.locator('#passkey-status').textContent()).resolves.toMatch(
      /needs one of these passkeys/,
    );

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInScreen().waitFor();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.locator('#live[data-state="live"]').waitFor();
    await expect(page.getByRole('navigation', { name: 'Workspace' }).isVisible()).resolves.toBe(
      true,
    );
    expect(errors).toEqual([]);
  });

  it('no credential but a fresh passkey assertion approves: owner token, copied session and agent token are refused', async () => {
    const asked = await agent.call('ledger_count', { to: 1 });
    expect(asked.body.code).toBe('approvalRequired');
    const id = String(asked.body.approvalID);

    const token = await approve(id, { authorization: `Bearer ${served.ownerToken!}` });
    expect(token.status).toBe(403);
    expect(((await token.json()) as { message: string }).message).toMatch(
      /open the Airlock inbox .* approve there with your passkey/,
    );
    expect((await approve(id, await sessionHeader())).status).toBe(403);
    expect((await approve(id, { authorization: `Bearer ${served.agentToken!}` })).status).toBe(403);
    expect(await pendingIds()).toContain(id);
    // The call still asks.
    expect((await agent.call('ledger_count', { to: 1 })).body.code).toBe('approvalRequired');
  });

  it('an approval with the passkey in the inbox runs the call once', async () => {
    const asked = await agent.call('ledger_count', { to: 3 });
    const id = String(asked.body.approvalID);
    await page.evaluate(() => (location.hash = '#/approvals'));
    const card = page.locator(`[data-approval-id="${id}"]`);
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    expect(await pendingIds()).not.toContain(id);
    const ran = await agent.call('ledger_count', { to: 3 });
    expect(ran.isError).toBe(false);
    expect(ran.body.jobId).toBeTruthy();
    expect((await agent.call('ledger_count', { to: 3 })).body.code).toBe('approvalRequired');
  });

  it('an assertion for approval A cannot approve B, and an assertion is accepted once', async () => {
    const a = String((await agent.call('ledger_count', { to: 4 })).body.approvalID);
    const b = String((await agent.call('ledger_count', { to: 5 })).body.approvalID);
    const forA = await assertionFor(`approvals/${a}/approve`, { scope: 'once' });
    const onB = await approve(b, { ...(await sessionHeader()), 'x-airlock-presence': forA });
    expect(onB.status).toBe(403);
    expect(await pendingIds()).toEqual(expect.arrayContaining([a, b]));
    // Another scope for A is another decision too.
    const onceA = await assertionFor(`approvals/${a}/approve`, { scope: 'once' });
    const quarter = await approve(
      a,
      { ...(await sessionHeader()), 'x-airlock-presence': onceA },
      { scope: '15m' },
    );
    expect(quarter.status).toBe(403);

    const fresh = await assertionFor(`approvals/${a}/approve`, { scope: 'once' });
    const session = await sessionHeader();
    expect((await approve(a, { ...session, 'x-airlock-presence': fresh })).status).toBe(200);
    const replay = await approve(b, { ...session, 'x-airlock-presence': fresh });
    expect(replay.status).toBe(403);
    const again = await approve(a, {
      authorization: `Bearer ${served.ownerToken!}`,
      'x-airlock-presence': fresh,
    });
    expect(again.status).toBe(403);
    expect(((await again.json()) as { message: string }).message).toMatch(/used already/);
    expect(await pendingIds()).toContain(b);
  });

  it('changing the policy or the agents needs the passkey too', async () => {
    const owner = {
      authorization: `Bearer ${served.ownerToken!}`,
      'content-type': 'application/json',
    };
    const rule = await fetch(`${served.url}/api/v1/policy/rules`, {
      method: 'POST',
      headers: owner,
      body: JSON.stringify({ door: 'ledger', tool: 'ledger_count', decision: 'allow' }),
    });
    expect(rule.status).toBe(403);
    const made = await fetch(`${served.url}/api/v1/agents`, {
      method: 'POST',
      headers: owner,
      body: JSON.stringify({ name: 'sneaky' }),
    });
    expect(made.status).toBe(403);
    const revoke = await fetch(`${served.url}/api/v1/agents/passkey-test-agent`, {
      method: 'DELETE',
      headers: owner,
    });
    expect(revoke.status).toBe(403);
  });

  it('after enrolment the owner token file is gone, and an agent with a copy of every file of the data folder cannot approve', async () => {
    const data = join(dir, 'data');
    expect(existsSync(join(data, 'owner.token'))).toBe(false);
    const asked = await agent.call('ledger_count', { to: 7 });
    const id = String(asked.body.approvalID);

    const copy = join(dir, 'copy');
    cpSync(data, copy, { recursive: true });
    // Every credential-like string in every file, the token read before enrolment besides.
    const found = new Set<string>([served.ownerToken!]);
    const walk = (folder: string) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const full = join(folder, entry.name);
        if (entry.isDirectory()) walk(full);
        else
          for (const m of readFileSync(full)
            .toString('latin1')
            .matchAll(/[\w-]{20,}/g))
            found.add(m[0]);
      }
    };
    walk(copy);
    expect(found.size).toBeGreaterThan(1);

    const routes: [string, string, unknown][] = [
      ['POST', `approvals/${id}/approve`, { scope: 'once' }],
      ['POST', `approvals/${id}/approve`, { scope: '15m' }],
      ['POST', 'policy/rules', { door: 'ledger', tool: 'ledger_count', decision: 'allow' }],
      ['PUT', 'policy/read-only', { workspace: false, doors: [] }],
      ['POST', 'agents', { name: 'copycat' }],
      ['DELETE', 'agents/passkey-test-agent', undefined],
    ];
    for (const value of found)
      for (const credential of [
        { authorization: `Bearer ${value}` } as Record<string, string>,
        { 'x-airlock-session': value },
      ])
        for (const [method, path, body] of routes) {
          const res = await fetch(`${served.url}/api/v1/${path}`, {
            method,
            headers: { ...credential, origin: served.url, 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          });
          expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        }

    // The CLI on the copy (in process) and on the real folder (through the server) decides nothing.
    for (const args of [
      ['approvals', 'approve', id, '--data', copy, '--url', 'http://127.0.0.1:9'],
      [
        'approvals',
        'approve',
        id,
        '--data',
        data,
        '--url',
        served.url,
        '--owner-token',
        served.ownerToken!,
      ],
      ['agents', 'add', 'copycat', '--data', data],
      ['owner', 'rotate', '--data', data],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).not.toBe(0);
    }
    const viaServer = await run([
      'approvals',
      'approve',
      id,
      '--data',
      data,
      '--url',
      served.url,
      '--owner-token',
      served.ownerToken!,
    ]);
    expect(viaServer.stderr).toMatch(
      /needs your passkey; open http:\/\/localhost:\d+\/#\/approvals/,
    );

    expect(await pendingIds()).toContain(id);
    expect((await agent.call('ledger_count', { to: 7 })).body.code).toBe('approvalRequired');
    const agents = await fetch(`${served.url}/api/v1/agents`, { headers: await sessionHeader() });
    expect(JSON.stringify(await agents.json())).not.toContain('copycat');
  });

  it('an ask raised over airlock stdio on the same store is approved in the browser with the passkey', async () => {
    const client = new Client({ name: 'stdio-asker', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          BIN,
          'stdio',
          '--doors',
          'ledger',
          '--data',
          join(dir, 'data'),
          '--config',
          join(dir, 'config.json'),
        ],
        env: testEnv() as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      const call = async () =>
        toolBody(await client.callTool({ name: 'ledger_count', arguments: { to: 2 } }));
      const asked = await call();
      expect(asked.code).toBe('approvalRequired');
      const id = String(asked.approvalID);
      // The store's passkey is needed here too: the owner token alone is refused.
      expect((await approve(id, { authorization: `Bearer ${served.ownerToken!}` })).status).toBe(
        403,
      );
      // The stdio process publishes on no bus of the server: the inbox shows the ask once reloaded.
      await page.evaluate(() => (location.hash = '#/approvals'));
      await page.reload();
      await page.locator('#live[data-state="live"]').waitFor();
      const card = page.locator(`[data-approval-id="${id}"]`);
      await card.getByRole('button', { name: 'Approve once' }).click();
      await card.waitFor({ state: 'detached' });
      expect((await call()).jobId).toBeTruthy();
    } finally {
      await client.close();
    }
  });

  it('owner reset waits for the server to stop, then forgets the passkeys and writes a new owner token', async () => {
    const data = join(dir, 'data');
    const running = await run(['owner', 'reset', '--data', data]);
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/stop it first/);
    served.child.kill('SIGTERM');
    await served.exited;
    const reset = await run(['owner', 'reset', '--data', data]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/1 passkey\(s\) forgotten/);
    expect(existsSync(join(data, 'owner.token'))).toBe(true);
    const link = await run(['owner', 'link', '--data', data]);
    expect(link.stdout).toMatch(/^http:\/\/localhost:7300\/login#code=/);
  });
});
