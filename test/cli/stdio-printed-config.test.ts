/**
 * Stdio that just works (issue 17): an SDK client spawned with exactly the
 * stdio configuration `airlock serve` printed runs the Koharu flow (import
 * pages → pipeline → export) and the RooQi flow (request access, the owner
 * approves in the running server's web UI in Chromium, then read and
 * write) — the spawned process shares the server's data folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startServe, type Served } from '../helpers/servers.js';
import { testEnv } from '../helpers/cli.js';
import { launchChromium } from '../helpers/browser.js';
import { structuredOf, toolBody } from '../helpers/results.js';
import { comicPage } from '../doors/scene/helpers.js';
import { go, openUi, type UiPage } from '../web/browser.js';

const dir = mkdtempSync(join(tmpdir(), 'airlock-stdio-config-'));
let served: Served;
let browser: Browser;
let client: Client;
let printed: { command: string; args: string[] };

/** The stdio block `airlock serve` printed: {mcpServers: {airlock: {command, args}}}. */
function printedStdioConfig(out: string): { command: string; args: string[] } {
  const at = out.indexOf('MCP client configuration over stdio');
  expect(at, 'serve prints a stdio configuration').toBeGreaterThan(-1);
  const from = out.indexOf('{', at);
  const to = out.indexOf('\n}\n', from);
  const parsed = JSON.parse(out.slice(from, to + 2)) as {
    mcpServers: Record<string, { command: string; args: string[] }>;
  };
  return parsed.mcpServers.airlock!;
}

beforeAll(async () => {
  [served, browser] = await Promise.all([
    startServe(['--data', dir, '--doors', 'scene,notes,page']),
    launchChromium(),
  ]);
  printed = printedStdioConfig(served.stdout());
  client = new Client({ name: 'desktop-client', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command: printed.command,
      args: printed.args,
      // A desktop client spawns in a folder of its choosing.
      cwd: tmpdir(),
      env: testEnv() as Record<string, string>,
      stderr: 'pipe',
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  await browser?.close();
  served?.child.kill('SIGTERM');
  await served?.exited;
  rmSync(dir, { recursive: true, force: true });
});

const call = async (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args });

describe('the stdio configuration airlock serve prints', () => {
  it('is an absolute command with --data at the server’s folder and without the page door', async () => {
    expect(printed.command).toBe(process.execPath);
    expect(printed.args[0]).toMatch(/^\/.*bin\/airlock\.js$/);
    expect(printed.args).toContain('stdio');
    expect(printed.args[printed.args.indexOf('--data') + 1]).toBe(dir);
    expect(printed.args[printed.args.indexOf('--doors') + 1]).toBe('scene,notes');
    expect(served.stdout()).toContain('approve in its web UI');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('koharu.import_pages');
    expect(names).toContain('rooqi_append_text');
    expect(names.some((n) => n.startsWith('wu_'))).toBe(false);
  });

  it('runs the Koharu flow over stdio alone: import pages → pipeline → export', async () => {
    const opened = await call('koharu.open_project', { path: 'stdio', createName: 'Stdio' });
    expect(opened.isError).toBeFalsy();
    const png = Buffer.from(await comicPage([{ text: 'HELLO', x: 40, y: 90 }])).toString('base64');
    const imported = await call('koharu.import_pages', {
      base64: [
        { name: 'one.png', data: png },
        { name: 'two.png', data: png },
      ],
    });
    expect(imported.isError).toBeFalsy();
    expect((structuredOf(imported).pages as unknown[]).length).toBe(2);
    const started = await call('koharu.start_pipeline', { steps: ['tesseract', 'fill'] });
    expect(started.isError).toBeFalsy();
    const jobId = String(structuredOf(started).jobId);
    await expect
      .poll(async () => structuredOf(await call('koharu.get_job', { jobId })).status, {
        timeout: 90_000,
        interval: 250,
      })
      .toBe('completed');
    const exported = await call('koharu.export', { format: 'khr' });
    expect(exported.isError).toBeFalsy();
    const link = (exported.content as { type: string; uri?: string }[]).find(
      (c) => c.type === 'resource_link',
    );
    expect(link?.uri).toBeTruthy();
  }, 120_000);

  it('runs the RooQi flow: the owner approves in the running server’s web UI, then the stdio agent reads and writes', async () => {
    const owner = {
      authorization: `Bearer ${served.ownerToken!}`,
      'content-type': 'application/json',
    };
    const project = (await (
      await fetch(`${served.url}/api/v1/notes/projects`, {
        method: 'POST',
        headers: owner,
        body: JSON.stringify({ name: 'Shared' }),
      })
    ).json()) as { projectID: string };
    const doc = (await (
      await fetch(`${served.url}/api/v1/notes/documents`, {
        method: 'POST',
        headers: owner,
        body: JSON.stringify({ projectID: project.projectID, title: 'Over stdio' }),
      })
    ).json()) as { documentID: string };

    for (const tool of ['rooqi_request_write_access', 'rooqi_request_read_access'])
      expect(toolBody(await call(tool)).code).toBe('approvalRequired');

    const ui: UiPage = await openUi(browser, `${served.url}/#/approvals`, {
      login: served.loginUrl!,
    });
    await go(ui, 'approvals', 'Approvals');
    for (const capability of ['write', 'read']) {
      const card = ui.page.locator('[data-approval-id]', {
        hasText: `notes: ${capability} access`,
      });
      await card.waitFor();
      const picker = card.getByLabel('Project the grant covers');
      await expect.poll(() => picker.locator('option').count()).toBeGreaterThan(1);
      await picker.selectOption({ label: 'Shared' });
      await card.getByRole('button', { name: 'Approve' }).click();
      await card.waitFor({ state: 'detached' });
    }
    await ui.context.close();
    // Asked again, each request answers with the grant the owner made.
    for (const tool of ['rooqi_request_write_access', 'rooqi_request_read_access'])
      expect(toolBody(await call(tool)).code).toBe('ready');

    const written = toolBody(
      await call('rooqi_append_text', {
        operationID: randomUUID(),
        documentID: doc.documentID,
        text: 'written over stdio',
        expectedVersion: 0,
        provider: 'acme-ai',
        model: 'writer-2',
        promptVersion: 'p-1',
      }),
    );
    expect(written, JSON.stringify(written)).toMatchObject({ code: 'ready' });
    const read = toolBody(await call('rooqi_read_note', { documentID: doc.documentID }));
    expect(read, JSON.stringify(read)).toMatchObject({ code: 'ready' });
    expect(String(read.resultJSON)).toContain('written over stdio');
  }, 60_000);

  it('airlock stdio mounts the page door only when named, and --relay-port 0 lets two such processes run at once', async () => {
    const spawn = async (args: string[]) => {
      const c = new Client({ name: 'spawner', version: '1' });
      await c.connect(
        new StdioClientTransport({
          command: printed.command,
          args: [printed.args[0]!, 'stdio', '--data', mkdtempSync(join(dir, 'spawned-')), ...args],
          env: testEnv() as Record<string, string>,
          stderr: 'pipe',
        }),
      );
      return c;
    };
    const plain = await spawn([]);
    const tools = (await plain.listTools()).tools.map((t) => t.name);
    expect(tools.some((n) => n.startsWith('koharu.'))).toBe(true);
    expect(tools.some((n) => n.startsWith('wu_'))).toBe(false);
    const [a, b] = await Promise.all([
      spawn(['--doors', 'page', '--relay-port', '0']),
      spawn(['--doors', 'page', '--relay-port', '0']),
    ]);
    for (const c of [a, b])
      expect((await c.listTools()).tools.some((t) => t.name.startsWith('wu_'))).toBe(true);
    await Promise.all([plain.close(), a.close(), b.close()]);
  }, 60_000);
});
