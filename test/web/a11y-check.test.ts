import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { a11yProblems } from './browser.js';
import { launchChromium } from '../helpers/browser.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('the accessibility check the screen tests use', () => {
  it('reports unnamed controls, images without alt, a missing h1 and duplicate ids', async () => {
    const page = await browser.newPage();
    await page.setContent(
      '<main><input id="a"><button></button><img src="data:,"><p id="x"></p><p id="x"></p>' +
        '<label>Named <input id="b"></label><button>Go</button><input hidden></main>',
    );
    expect(await a11yProblems(page)).toEqual([
      '/: input#a has no accessible name',
      '/: button#? has no accessible name',
      '/: img data:, has no alt',
      '/: 0 h1 headings in main',
      '/: id x used 2 times',
    ]);
    await page.close();
  });
});
