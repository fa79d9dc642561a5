/**
 * The notes screens against a real `airlock serve --doors notes` in headless
 * Chromium: projects and documents made in the UI, a PDF uploaded, an agent
 * given PDF and write access through the inbox's project picker, its
 * annotation visible on the PDF page view and inside the downloaded PDF,
 * block provenance, and receipt verification.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startServe, type Served } from '../helpers/servers.js';
import { go, openUi, screenshots, type UiPage } from './browser.js';
import { launchChromium } from '../helpers/browser.js';
import { connectAgent, type Agent } from './mcp.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-web-notes-'));
let served: Served;
let browser: Browser;
let ui: UiPage;
let agent: Agent;
let documentID = '';

/** The owner's bearer header, for reading what the UI did straight from the REST API. */
const owner = () => ({ authorization: `Bearer ${served.ownerToken!}` });

const PROVENANCE = { provider: 'acme-ai', model: 'writer-2', promptVersion: 'p-17' };

async function samplePdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([612, 792]);
  page.drawText('The key finding is here.', { x: 72, y: 700, size: 24, font });
  page.drawText('Another line further down.', { x: 72, y: 400, size: 18, font });
  return Buffer.from(await pdf.save());
}

/** The notes envelope's parsed resultJSON (or the envelope itself when it is an error). */
async function rooqi(name: string, args: Record<string, unknown> = {}) {
  const { body } = await agent.call(name, args);
  return body.code === 'ready' && typeof body.resultJSON === 'string'
    ? (JSON.parse(body.resultJSON) as Record<string, unknown>)
    : body;
}

/** Approves the agent's pending request for `capability` in the inbox, choosing the project by name. */
async function approveInUi(capability: string, project: string) {
  const { page } = ui;
  await go(ui, 'approvals', 'Approvals');
  const card = page.locator('[data-approval-id]', { hasText: `notes: ${capability} access` });
  await card.waitFor();
  const picker = card.getByLabel('Project the grant covers');
  await expect.poll(() => picker.locator('option').count()).toBeGreaterThan(1);
  await picker.selectOption({ label: project });
  await card.getByRole('button', { name: 'Approve' }).click();
  await card.waitFor({ state: 'detached' });
}

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--doors', 'notes', '--data', dir]),
    launchChromium(),
  ]);
  ui = await openUi(browser, `${served.url}/#/notes`, { login: served.loginUrl! });
  agent = await connectAgent(served.url, 'notes-web-agent', served.agentToken!);
});

afterAll(async () => {
  await agent?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('web UI: notes', () => {
  it('creates a project and a document, adds text and uploads a PDF', async () => {
    const { page } = ui;
    await page.getByRole('heading', { level: 1, name: 'Notes' }).waitFor();
    await page.getByLabel('Project name').fill('Research');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByLabel('New document in Research').fill('Paper review');
    await page.getByRole('button', { name: 'Create document' }).click();
    await page.getByRole('heading', { level: 1, name: 'Paper review' }).waitFor();
    documentID = decodeURIComponent(page.url().split('/doc/')[1]!);

    await page.getByLabel('Text to add').fill('My own first note.');
    await page.getByRole('button', { name: 'Add text' }).click();
    await page
      .locator('#blocks [data-author="owner"]', { hasText: 'My own first note.' })
      .waitFor();

    await page
      .getByLabel('PDF file')
      .setInputFiles({ name: 'paper.pdf', mimeType: 'application/pdf', buffer: await samplePdf() });
    await page.getByRole('button', { name: 'Upload PDF' }).click();
    await page.locator('#surfaces [data-surface-id]').waitFor();
    await go(ui, 'notes', 'Notes');
    await page.getByRole('link', { name: 'Paper review' }).waitFor();
    await screenshots(ui, 'notes-projects');
  });

  it("shows an agent's appended block with its provenance, and verifies its receipt", async () => {
    const { page } = ui;
    expect((await rooqi('rooqi_request_write_access')).code).toBe('approvalRequired');
    await approveInUi('write', 'Research');
    await rooqi('rooqi_request_write_access');
    await page.evaluate((id) => (location.hash = `#/notes/doc/${id}`), documentID);
    await page.getByRole('heading', { level: 1, name: 'Paper review' }).waitFor();
    const doc = await (
      await fetch(`${served.url}/api/v1/notes/documents/${documentID}`, { headers: owner() })
    ).json();
    const receipt = await rooqi('rooqi_append_text', {
      operationID: randomUUID(),
      documentID,
      text: 'An agent summary of the paper.',
      expectedVersion: (doc as { revision: number }).revision,
      ...PROVENANCE,
    });
    expect(receipt).toMatchObject({ documentID, ownerProofSHA256: expect.any(String) });

    // Arrives without a reload, with who wrote it.
    const block = page.locator('#blocks [data-author="agent"]', { hasText: 'An agent summary' });
    await block.waitFor();
    await expect(block.locator('.provenance').textContent()).resolves.toContain(
      'acme-ai · writer-2 · prompt p-17',
    );

    const write = page.locator(`#writes [data-operation-id="${String(receipt.operationID)}"]`);
    await write.getByRole('button', { name: /Check the receipt of rooqi_append_text/ }).click();
    await expect.poll(() => write.locator('.verdict-ok').count()).toBe(1);

    await page
      .getByLabel('Receipt (JSON)')
      .fill(JSON.stringify({ ...receipt, committedRevision: 99 }));
    await page.getByRole('button', { name: 'Verify receipt' }).click();
    await expect
      .poll(() => page.locator('#receipt-verdict').getAttribute('class'))
      .toBe('verdict-bad');
    await page.getByLabel('Receipt (JSON)').fill(JSON.stringify(receipt));
    await page.getByRole('button', { name: 'Verify receipt' }).click();
    await expect
      .poll(() => page.locator('#receipt-verdict').getAttribute('class'))
      .toBe('verdict-ok');
    await screenshots(ui, 'notes-document');
  });

  it('shows an annotation written over MCP on the PDF page view, and the downloaded PDF contains it', async () => {
    const { page } = ui;
    expect((await rooqi('rooqi_request_pdf_annotation_access')).code).toBe('approvalRequired');
    await approveInUi('pdfAnnotate', 'Research');
    await rooqi('rooqi_request_pdf_annotation_access');
    const targets = (await rooqi('rooqi_list_pdf_targets', { documentID })) as {
      revision: number;
      targets: { surfaceID: string; sourceAssetID: string; sourceDigest: string }[];
    };
    const target = targets.targets[0]!;
    const query = {
      documentID,
      surfaceID: target.surfaceID,
      pageIndex: 0,
      rect: { x: 50_000, y: 50_000, width: 800_000, height: 150_000 },
    };
    const read = await rooqi('rooqi_read_pdf_page', query);
    expect(read.selectedText).toBe('The key finding is here.');

    await page.evaluate(([d, s]) => (location.hash = `#/notes/pdf/${d}/${s}`), [
      documentID,
      target.surfaceID,
    ] as const);
    await page.getByRole('heading', { level: 1, name: /PDF page 1 of 1/ }).waitFor();
    await page.locator('#pdf-annotations .empty').waitFor();

    const annotated = await rooqi('rooqi_annotate_pdf', {
      operationID: randomUUID(),
      query,
      expectedVersion: read.revision,
      sourceAssetID: read.sourceAssetID,
      sourceDigest: read.sourceDigest,
      geometryDigest: read.geometryDigest,
      selectionTextDigest: read.selectionTextDigest,
      kind: 'highlight',
      comment: 'Check this claim',
      ...PROVENANCE,
    });
    expect(annotated).toMatchObject({ ownerProofSHA256: expect.any(String) });

    // The view reloads the annotated PDF live and outlines what the PDF itself carries.
    const item = page.locator('#pdf-annotations li[data-kind="Highlight"]');
    await item.waitFor();
    await expect(item.textContent()).resolves.toBe('Highlight: Check this claim');
    const box = await page.locator('#pdf-stage .overlay[data-kind="Highlight"]').boundingBox();
    const stage = await page.locator('#pdf-stage canvas').boundingBox();
    expect(box && stage).toBeTruthy();
    // Over the first line: in the top fifth of the page.
    expect((box!.y - stage!.y) / stage!.height).toBeLessThan(0.2);
    await screenshots(ui, 'notes-pdf');

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download annotated PDF' }).click();
    const bytes = readFileSync(await (await download).path());
    const text = bytes.toString('latin1');
    expect(text.startsWith('%PDF-')).toBe(true);
    expect(text).toContain('/Highlight');
    const reopened = await PDFDocument.load(bytes);
    expect(reopened.getPage(0).node.Annots()?.size()).toBe(1);
  });

  it('approves a request for a new project named in the inbox, and announces new requests', async () => {
    const { page } = ui;
    const other = await connectAgent(served.url, 'notes-reader', served.agentToken!);
    try {
      expect((await other.call('rooqi_request_read_access')).body.code).toBe('approvalRequired');
      await expect
        .poll(() => page.locator('#announce').textContent())
        .toBe('New request: notes read access');
      await go(ui, 'approvals', 'Approvals');
      const card = page.locator('[data-approval-id]', { hasText: 'notes: read access' });
      const picker = card.getByLabel('Project the grant covers');
      await expect.poll(() => picker.locator('option').count()).toBeGreaterThan(2);
      await picker.selectOption({ label: 'New project…' });
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('name')))
        .toBe('new-project');
      await page.keyboard.type('Made in the inbox');
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.waitFor({ state: 'detached' });
      const grants = (await (
        await fetch(`${served.url}/api/v1/grants`, { headers: owner() })
      ).json()) as {
        grants: { capability: string; resource: { name: string } | null }[];
      };
      expect(grants.grants).toContainEqual(
        expect.objectContaining({
          capability: 'read',
          resource: expect.objectContaining({ name: 'Made in the inbox' }),
        }),
      );
      const { body } = await other.call('rooqi_request_read_access');
      expect(body.code).toBe('ready');
    } finally {
      await other.close();
    }
  });

  it('logged no console errors on any notes screen', () => {
    expect(ui.errors).toEqual([]);
    expect(ui.a11y).toEqual([]);
  });
});
