/**
 * The web app's one form helper (src/web/app/form.ts), in headless Chromium
 * on the built app modules (`npm run build` first): the button is disabled
 * while the request runs, a failure shows its sentence where the form shows
 * failures and gives the button back, a refusal says what to fix and sends
 * nothing, a context target goes to the page's alert region, Enter in a
 * field submits, and a script's submit is not the owner's and sends nothing
 * — not even in a listener of the owner's own click elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { createWebUi } from '../../src/web/web-ui.js';
import { launchChromium } from '../helpers/browser.js';

const APP = fileURLToPath(new URL('../../dist/web/app/', import.meta.url));

const PAGE = `<!doctype html><html><body><main>
<div id="errors"></div>
<form id="named"><label>Name <input id="name"></label><button id="add" type="submit">Add</button>
<p id="problem"></p></form>
<form id="export"><button id="export-button" type="submit">Export</button></form>
<button id="elsewhere" type="button">Elsewhere</button>
<script type="module">
import { form, refuse } from '/ui/form.js';
import { initErrors } from '/ui/errors.js';
const $ = (id) => document.getElementById(id);
initErrors($('errors'));
window.sent = [];
form($('named'), {
  button: $('add'),
  clear: [$('problem')],
  read: () => $('name').value.trim() || refuse('Give the agent a name first.'),
  send: (name) => new Promise((resolve, reject) => {
    window.sent.push(name);
    window.settle = { resolve, reject };
  }),
  failed: $('problem'),
});
form($('export'), {
  button: $('export-button'),
  send: () => Promise.reject(new Error('The project has no pages; add pages first.')),
  failed: 'Export failed',
});
window.ready = true;
</script></main></body></html>`;

let server: Server;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const ui = createWebUi({ appDir: APP });
  server = createServer((req, res) => {
    if (req.url === '/form') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE);
      return;
    }
    void ui(req, res).then((served) => {
      if (!served) res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  browser = await launchChromium();
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/form`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

const sent = () => page.evaluate(() => (window as unknown as { sent: string[] }).sent);
const settle = (how: 'resolve' | 'reject', message = '') =>
  page.evaluate(
    ([how, message]) => {
      const w = window as unknown as {
        settle: { resolve(): void; reject(e: Error): void };
      };
      if (how === 'resolve') w.settle.resolve();
      else w.settle.reject(new Error(message));
    },
    [how, message] as const,
  );

describe('form(): the one way a screen submits', () => {
  it('a refusal shows what to fix and sends nothing', async () => {
    await page.getByRole('button', { name: 'Add' }).click();
    await expect
      .poll(() => page.locator('#problem').textContent())
      .toBe('Give the agent a name first.');
    expect(await sent()).toEqual([]);
    expect(await page.locator('#add').isEnabled()).toBe(true);
  });

  it('disables the button while sending; a failure shows its sentence and re-enables the button', async () => {
    await page.getByLabel('Name').fill('  builder  ');
    await page.getByRole('button', { name: 'Add' }).click();
    await expect.poll(sent).toEqual(['builder']);
    // The last submit's sentence is cleared when a new one begins.
    expect(await page.locator('#problem').textContent()).toBe('');
    expect(await page.locator('#add').isDisabled()).toBe(true);
    expect(await page.locator('#add').getAttribute('aria-busy')).toBe('true');
    await settle('reject', 'An agent named builder exists; choose another name.');
    await expect
      .poll(() => page.locator('#problem').textContent())
      .toBe('An agent named builder exists; choose another name.');
    expect(await page.locator('#add').isEnabled()).toBe(true);
    expect(await page.locator('#add').getAttribute('aria-busy')).toBeNull();
  });

  it('a success gives the button back with no problem shown', async () => {
    await page.getByRole('button', { name: 'Add' }).click();
    await expect.poll(sent).toEqual(['builder', 'builder']);
    await settle('resolve');
    await expect.poll(() => page.locator('#add').isEnabled()).toBe(true);
    expect(await page.locator('#problem').textContent()).toBe('');
  });

  it('a failure with a context target goes to the alert region under that context', async () => {
    await page.getByRole('button', { name: 'Export' }).click();
    await expect
      .poll(() => page.locator('#errors p').textContent())
      .toBe('Export failed: The project has no pages; add pages first.');
    expect(await page.locator('#export-button').isEnabled()).toBe(true);
  });

  it("Enter in the form's field is the owner's submit", async () => {
    await page.getByLabel('Name').press('Enter');
    await expect.poll(sent).toEqual(['builder', 'builder', 'builder']);
    await settle('resolve');
    await expect.poll(() => page.locator('#add').isEnabled()).toBe(true);
  });

  it("a script's submit in a listener of the owner's click elsewhere is not the owner's: nothing is sent", async () => {
    // A hostile script rides the owner's click on another control: the submit
    // comes during that click's own task, while its input is being handled.
    await page.evaluate(() => {
      document.getElementById('elsewhere')!.addEventListener('click', () => {
        (document.getElementById('named') as HTMLFormElement).requestSubmit();
      });
    });
    await page.getByRole('button', { name: 'Elsewhere' }).click();
    await page.getByRole('button', { name: 'Elsewhere' }).click();
    expect(await sent()).toHaveLength(3);
    expect(await page.locator('#add').isEnabled()).toBe(true);
  });

  it("a script's submit is not the owner's: nothing is sent", async () => {
    // Right after the owner's click (the reset of its input may run late).
    await page.getByRole('button', { name: 'Elsewhere' }).click();
    // The handler runs inside requestSubmit(): a sent submit would show at once.
    const after = await page.evaluate(() => {
      (document.getElementById('named') as HTMLFormElement).requestSubmit();
      const w = window as unknown as { sent: string[] };
      return {
        sent: w.sent.length,
        disabled: (document.getElementById('add') as HTMLButtonElement).disabled,
      };
    });
    expect(after).toEqual({ sent: 3, disabled: false });
  });
});
