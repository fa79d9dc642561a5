/**
 * The scenes screens against a real `airlock serve --doors scene` in
 * headless Chromium: a project created and pages uploaded in the UI, a
 * pipeline started over MCP watched to 100 % without reloading, node
 * overlays with text and a translation written over MCP, undo/redo with the
 * epoch, the engine list, and export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { createCanvas } from '@napi-rs/canvas';
import { startServe, type Served } from '../helpers/servers.js';
import { openUi, screenshots, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { testEnv } from '../helpers/cli.js';
import { connectAgent, type Agent } from './mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-scenes-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent;

/** A light page with bold black words, as a comic page scan. */
async function pageImage(words: string[]): Promise<Buffer> {
  const canvas = createCanvas(480, 320);
  const g = canvas.getContext('2d');
  g.fillStyle = '#f4f4f4';
  g.fillRect(0, 0, 480, 320);
  g.fillStyle = '#000';
  g.font = 'bold 40px "DejaVu Sans"';
  words.forEach((w, i) => g.fillText(w, 40, 90 + i * 120));
  return Buffer.from(await canvas.encode('png'));
}

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(
      ['--doors', 'scene', '--data', dir],
      testEnv({ AIRLOCK_LLM_BASE_URL: 'http://127.0.0.1:1/v1' }),
    ),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/scenes`, { login: served.loginUrl! });
  agent = await connectAgent(served.url, 'scenes-web-agent', served.agentToken!);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: scenes', () => {
  it('lists the engines, creates a project and adds pages with thumbnails', async () => {
    const { page } = ui;
    await page.getByRole('heading', { level: 1, name: 'Scenes' }).waitFor();
    await expect
      .poll(() =>
        page
          .locator('#engines [data-engine]')
          .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.engine)),
      )
      .toEqual(expect.arrayContaining(['tesseract', 'llm', 'fill', 'renderer']));
    await page.getByLabel('New project name').fill('Comic');
    await page.getByRole('button', { name: 'Create and open' }).click();
    await expect.poll(() => page.locator('#scene-project').textContent()).toBe('Open: Comic');
    await page.getByLabel('Page images').setInputFiles([
      { name: 'one.png', mimeType: 'image/png', buffer: await pageImage(['HELLO', 'WORLD']) },
      { name: 'two.png', mimeType: 'image/png', buffer: await pageImage(['GOOD NIGHT']) },
    ]);
    await page.getByRole('button', { name: 'Add pages' }).click();
    const thumbs = page.locator('#thumbnails [data-page-id] img');
    await expect.poll(() => thumbs.count()).toBe(2);
    await expect
      .poll(() => thumbs.first().evaluate((i) => (i as HTMLImageElement).naturalWidth))
      .toBeGreaterThan(0);
  });

  it('shows a pipeline started over MCP advancing to 100 % and finished, without reloading', async () => {
    const { page } = ui;
    // Record every progress value the page shows, however fast the job runs
    // (polling alone can miss the intermediate values on a quick run).
    await page.evaluate(() => {
      const w = window as unknown as { __progress: number[] };
      w.__progress = [];
      new MutationObserver(() => {
        document.querySelectorAll('progress').forEach((p) => w.__progress.push(p.value));
      }).observe(document.body, {
        subtree: true,
        childList: true,
        attributes: true,
        attributeFilter: ['value'],
      });
    });
    // Thumbnails never go blank while the pipeline redraws them (issue 17).
    await page.evaluate(() => {
      const w = window as unknown as { __blank: number };
      w.__blank = 0;
      new MutationObserver(() => {
        document
          .querySelectorAll('#thumbnails img')
          .forEach((img) => void (img.getAttribute('src') ? 0 : w.__blank++));
      }).observe(document.querySelector('#thumbnails')!, { subtree: true, childList: true });
    });
    const started = await agent.call('koharu.start_pipeline', { steps: ['tesseract', 'fill'] });
    expect(started.isError).toBe(false);
    const job = page.locator(`[data-job-id="${String(started.body.jobId)}"]`);
    await job.waitFor();
    // The card names the project and the steps (issue 17).
    await expect(job.locator('.subject').textContent()).resolves.toBe('Comic · tesseract → fill');
    const seen = new Set<number>();
    await expect
      .poll(
        async () => {
          seen.add(
            Number(await job.locator('progress').evaluate((p) => (p as HTMLProgressElement).value)),
          );
          return job.getAttribute('data-status');
        },
        { interval: 50, timeout: 60_000 },
      )
      .toBe('completed');
    expect(await job.locator('progress').evaluate((p) => (p as HTMLProgressElement).value)).toBe(
      100,
    );
    const recorded = await page.evaluate(
      () => (window as unknown as { __progress: number[] }).__progress,
    );
    expect([...seen, ...recorded].some((v) => v > 0 && v < 100)).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __blank: number }).__blank)).toBe(0);
    await expect(job.locator('.status').textContent()).resolves.toBe('Finished');
    await screenshots(ui, 'scenes');
  });

  it('an EventSource on /events receives JobStarted … JobFinished by name for a pipeline (the Koharu wire)', async () => {
    const { page } = ui;
    await page.evaluate(async () => {
      const w = window as unknown as { __koharu: { name: string; data: unknown }[] };
      w.__koharu = [];
      // EventSource sends no session header: a single-use ticket from the session opens it.
      const { header, secret } = JSON.parse(sessionStorage.getItem('airlock.ownerSession')!) as {
        header: string;
        secret: string;
      };
      const res = await fetch('/api/v1/session/stream-ticket', {
        method: 'POST',
        headers: { [header]: secret },
      });
      const { ticket } = (await res.json()) as { ticket: string };
      const source = new EventSource(`/events?ticket=${encodeURIComponent(ticket)}`);
      for (const name of ['JobStarted', 'JobProgress', 'JobWarning', 'JobFinished', 'Snapshot'])
        source.addEventListener(name, (e) =>
          w.__koharu.push({ name, data: JSON.parse((e as MessageEvent<string>).data) }),
        );
    });
    await expect
      .poll(() =>
        page.evaluate(() =>
          (window as unknown as { __koharu: { name: string }[] }).__koharu.map((e) => e.name),
        ),
      )
      .toContain('Snapshot');
    const started = await agent.call('koharu.start_pipeline', { steps: ['tesseract', 'fill'] });
    expect(started.isError).toBe(false);
    const jobId = String(started.body.jobId);
    const ofJob = () =>
      page.evaluate(
        (id) =>
          (
            window as unknown as { __koharu: { name: string; data: Record<string, unknown> }[] }
          ).__koharu
            .filter((e) => e.data.id === id || e.data.jobId === id)
            .map((e) => e.name),
        jobId,
      );
    await expect.poll(ofJob, { timeout: 60_000 }).toContain('JobFinished');
    const names = await ofJob();
    expect(names[0]).toBe('JobStarted');
    expect(names).toContain('JobProgress');
    expect(names.at(-1)).toBe('JobFinished');
  });

  it('starts a pipeline from the UI and shows its per-page warnings when a step fails', async () => {
    const { page } = ui;
    // The translation endpoint (AIRLOCK_LLM_BASE_URL) is a closed loopback port, so the llm step fails on every page.
    await page.getByLabel('llm').check();
    await page.getByLabel('Target language').fill('Portuguese');
    await page.getByRole('button', { name: 'Start pipeline' }).click();
    const job = page.locator('[data-job-id][data-status="completed_with_errors"]');
    await job.waitFor({ timeout: 30_000 });
    await expect(job.locator('.status').textContent()).resolves.toBe('Finished with errors');
    const warnings = await job.locator('.warnings li').allTextContents();
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^page 1, step llm: could not reach the translation endpoint/);
    await page.getByLabel('llm').uncheck();
  });

  it('starts a pipeline from the UI on chosen pages with a system prompt and a default font; a bad page range is refused before anything starts', async () => {
    const { page } = ui;
    const owner = { authorization: `Bearer ${served.ownerToken!}` };
    const operations = async () =>
      (
        (await (await fetch(`${served.url}/api/v1/operations`, { headers: owner })).json()) as {
          operations: { id: string; input: Record<string, unknown> }[];
        }
      ).operations;
    const scene = (await (
      await fetch(`${served.url}/api/v1/scene.json`, { headers: owner })
    ).json()) as { scene: { pages: { id: string }[] } };
    const before = (await operations()).length;
    for (const box of await page.locator('#pipeline-steps input:checked').all())
      await box.uncheck();
    await page.getByLabel('tesseract').check();
    await page.getByLabel('Pages (e.g. 1-3, 5)').fill('9');
    await page.getByRole('button', { name: 'Start pipeline' }).click();
    await expect.poll(() => page.locator('#errors').textContent()).toContain('not within 1–2');
    expect((await operations()).length).toBe(before);

    await page.getByLabel('Pages (e.g. 1-3, 5)').fill('2');
    await page.getByLabel('Default font').fill('DejaVu Sans');
    await page.getByLabel('System prompt (optional)').fill('Keep the names as they are.');
    await page.getByRole('button', { name: 'Start pipeline' }).click();
    await expect.poll(async () => (await operations()).length).toBe(before + 1);
    const newest = (await operations())[0]!;
    expect(newest.input).toMatchObject({
      steps: ['tesseract'],
      pages: [scene.scene.pages[1]!.id],
      defaultFont: 'DejaVu Sans',
      systemPrompt: 'Keep the names as they are.',
    });
    // Let this run finish: its ops would otherwise interleave with the next
    // test's apply, undo and redo (each moves the epoch).
    const jobs = async () =>
      (
        (await (await fetch(`${served.url}/api/v1/jobs`, { headers: owner })).json()) as {
          jobs: { status: string }[];
        }
      ).jobs;
    await expect
      .poll(async () => (await jobs()).filter((j) => ['queued', 'running'].includes(j.status)), {
        timeout: 30_000,
      })
      .toEqual([]);
    await page.getByLabel('Pages (e.g. 1-3, 5)').fill('');
    await page.getByLabel('Default font').fill('');
    await page.getByLabel('System prompt (optional)').fill('');
    await page.getByLabel('tesseract').uncheck();
  });

  it('shows text regions over the page with text and a translation written over MCP; undo and redo say the epoch', async () => {
    const { page } = ui;
    await page.locator('#thumbnails a.thumb').first().click();
    await page.getByRole('heading', { level: 1, name: /^Page 1:/ }).waitFor();
    const overlays = page.locator('#scene-stage button.overlay');
    await expect.poll(() => overlays.count()).toBeGreaterThan(0);

    const scene = (await (
      await fetch(`${served.url}/api/v1/scene.json`, {
        headers: { authorization: `Bearer ${served.ownerToken!}` },
      })
    ).json()) as {
      scene: {
        pages: { id: string; nodes: { id: string; kind: Record<string, { text?: string }> }[] }[];
      };
    };
    const first = scene.scene.pages[0]!;
    const node = first.nodes.find(
      (n) => 'text' in n.kind && /HELLO/i.test(n.kind.text!.text ?? ''),
    )!;
    expect(node).toBeTruthy();
    const epochText = () => page.locator('#scene-epoch').textContent();
    const before = await epochText();
    const applied = await agent.call('koharu.apply', {
      op: {
        updateNode: {
          page: first.id,
          id: node.id,
          patch: { data: { text: { translation: 'OLÁ' } } },
        },
      },
    });
    expect(applied.isError).toBe(false);
    await expect.poll(epochText).toBe(`Epoch ${String(applied.body.epoch)}`);
    expect(before).not.toBe(await epochText());

    const region = page.locator(`#scene-stage button.overlay[data-node-id="${node.id}"]`);
    await region.focus();
    await page.keyboard.press('Enter');
    await expect(region.getAttribute('aria-pressed')).resolves.toBe('true');
    await expect(page.locator('#node-detail .node-text').textContent()).resolves.toMatch(/HELLO/i);
    await expect
      .poll(() => page.locator('#node-detail .node-translation').textContent())
      .toBe('OLÁ');
    await screenshots(ui, 'scene-page');

    await page.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(epochText).toBe(`Epoch ${Number(applied.body.epoch) + 1}`);
    await expect.poll(() => page.locator('#node-detail .node-translation').textContent()).toBe('—');
    await page.getByRole('button', { name: 'Redo' }).click();
    await expect.poll(epochText).toBe(`Epoch ${Number(applied.body.epoch) + 2}`);
    await expect
      .poll(() =>
        page.locator(`#text-nodes tr[data-node-id="${node.id}"] .translation`).textContent(),
      )
      .toBe('OLÁ');
  });

  it('exports the project as a khr archive', async () => {
    const { page } = ui;
    await page.getByRole('link', { name: '← All pages' }).click();
    await page.getByLabel('Format').selectOption('khr');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export' }).click();
    const bytes = readFileSync(await (await download).path());
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('logged no console errors on any scenes screen', () => {
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });
});
