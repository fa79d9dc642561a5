/**
 * Headless Chromium for the web UI tests (Debian's /usr/bin/chromium through
 * playwright-core), with every console error and page error collected so a
 * test can assert that no screen produced one, and screenshots written to
 * `.tmp/web-screenshots/` (gitignored) for review.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/web-screenshots/', import.meta.url));

export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught page errors seen so far, with the URL they happened on. */
  errors: string[];
}

/** Opens a fresh context (its own storage) at `url`, optionally with the bearer token set for the tab. */
export async function openUi(
  browser: Browser,
  url: string,
  options: { token?: string; viewport?: keyof typeof VIEWPORTS } = {},
): Promise<UiPage> {
  const context = await browser.newContext({
    viewport: VIEWPORTS[options.viewport ?? 'laptop'],
    acceptDownloads: true,
  });
  if (options.token)
    await context.addInitScript((t) => sessionStorage.setItem('airlock.token', t), options.token);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  await page.goto(url);
  await page.locator('#live[data-state="live"]').waitFor();
  return { page, context, errors };
}

/** Screenshots one screen at laptop and phone width into SCREENSHOTS/<name>-<viewport>.png. */
export async function screenshots(ui: UiPage, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await ui.page.setViewportSize(size);
    await ui.page.evaluate(() => window.scrollTo(0, 0));
    await ui.page.screenshot({ path: `${SCREENSHOTS}${name}-${label}.png`, fullPage: true });
  }
  await ui.page.setViewportSize(VIEWPORTS.laptop);
}

/** Navigates to a hash route and waits for that screen's heading. */
export async function go(ui: UiPage, route: string, heading: string): Promise<void> {
  await ui.page.evaluate((r) => (location.hash = r), `#/${route}`);
  await ui.page.getByRole('heading', { level: 1, name: heading }).waitFor();
}
