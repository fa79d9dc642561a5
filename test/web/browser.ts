/**
 * The web UI tests' pages in headless Chromium (started by
 * test/helpers/browser.ts), with every console error and page error collected so a
 * test can assert that no screen produced one, and screenshots written to
 * `.tmp/web-screenshots/` (gitignored) for review.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';

export const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/web-screenshots/', import.meta.url));

export const VIEWPORTS = {
  laptop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught page errors seen so far, with the URL they happened on. */
  errors: string[];
  /** Accessibility problems found on the screens checked so far (see `a11yProblems`). */
  a11y: string[];
}

/**
 * Basic accessibility checks of the current screen: every visible form
 * control and button has an accessible name, images have alt text, the
 * screen has exactly one h1, and ids are unique.
 */
export async function a11yProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const visible = (el: Element) =>
      (el as HTMLElement).offsetParent !== null || el.getClientRects().length > 0;
    const named = (el: Element) =>
      !!(
        el.getAttribute('aria-label')?.trim() ||
        el.getAttribute('aria-labelledby') ||
        ((el as HTMLInputElement).labels?.length ?? 0) > 0 ||
        ((el.tagName === 'BUTTON' || el.tagName === 'A') && el.textContent?.trim())
      );
    for (const el of document.querySelectorAll(
      'input:not([type=hidden]), select, textarea, button, a[href]',
    ))
      if (visible(el) && !named(el))
        problems.push(`${el.tagName.toLowerCase()}#${el.id || '?'} has no accessible name`);
    for (const img of document.querySelectorAll('img'))
      if (!img.hasAttribute('alt')) problems.push(`img ${img.src.slice(0, 40)} has no alt`);
    const h1 = document.querySelectorAll('main h1').length;
    if (h1 !== 1) problems.push(`${h1} h1 headings in main`);
    const ids = new Map<string, number>();
    for (const el of document.querySelectorAll('[id]')) ids.set(el.id, (ids.get(el.id) ?? 0) + 1);
    for (const [id, n] of ids) if (n > 1) problems.push(`id ${id} used ${n} times`);
    return problems.map((p) => `${location.hash || '/'}: ${p}`);
  });
}

/** Collects the page's console errors and uncaught errors, with the URL they happened on. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}

/**
 * Opens a fresh context (its own cookies and storage), signs the owner in by
 * opening the sign-in link `airlock serve` printed (`login`, single-use),
 * then shows `url` once the event stream is live.
 */
export async function openUi(
  browser: Browser,
  url: string,
  options: { login: string; viewport?: keyof typeof VIEWPORTS },
): Promise<UiPage> {
  const context = await browser.newContext({
    viewport: VIEWPORTS[options.viewport ?? 'laptop'],
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const errors = collectErrors(page);
  await page.goto(options.login);
  await page.locator('#live[data-state="live"]').waitFor();
  await page.goto(url);
  await page.locator('#live[data-state="live"]').waitFor();
  return { page, context, errors, a11y: [] };
}

/** Screenshots one screen at laptop and phone width into SCREENSHOTS/<name>-<viewport>.png, and checks its accessibility basics. */
export async function screenshots(ui: UiPage, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  ui.a11y.push(...(await a11yProblems(ui.page)));
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
