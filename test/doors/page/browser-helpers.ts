/** A workspace with the page door, headless Chromium on its demo page, and an SDK MCP client. */
import type { Browser, Page } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/client';
import { loadConfig } from '../../../src/doors/page/config.js';
import { createPageDoor } from '../../../src/doors/page/door.js';
import { createHttpApp, type HttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../../helpers/kernel.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { agentHeaders, ownerHeaders } from '../../helpers/principals.js';

export const BRIDGE_TOKEN = 'e2e-bridge-token-' + 'k'.repeat(24);

export interface Workspace {
  tk: TestKernel;
  app: HttpApp;
  base: string;
  door: ReturnType<typeof createPageDoor>;
  /** `authorization: Bearer <owner token>`: the bridge-token route is the owner's. */
  owner: Record<string, string>;
  close(): Promise<void>;
}

export async function startWorkspace(
  env: Record<string, string> = {},
  options: { effectTimeoutMs?: number } = {},
): Promise<Workspace> {
  const config = Object.freeze({
    ...loadConfig({ WU_MCP_TOKEN: BRIDGE_TOKEN, WU_MCP_TIMEOUT: '5000', ...env }),
    port: 0,
  });
  const door = createPageDoor({ config, ...options });
  const tk = await testKernel([door]);
  const app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  const addr = await app.listen(0, '127.0.0.1');
  return {
    tk,
    app,
    door,
    base: `http://127.0.0.1:${addr.port}`,
    owner: await ownerHeaders(tk.kernel),
    async close() {
      await app.close();
      await tk.dispose();
    },
  };
}

/**
 * Opens the demo page in a browser tab where the owner signed in (the page
 * fetches the owner-only bridge token with the session the workspace UI keeps
 * in this origin's sessionStorage) and waits until its bridge is authenticated.
 */
export async function openDemo(browser: Browser, ws: Workspace): Promise<Page> {
  const page = await browser.newPage();
  const token = ws.owner.authorization!.slice('Bearer '.length);
  const signedIn = await page.request.post(`${ws.base}/api/v1/session`, { data: { token } });
  if (!signedIn.ok()) throw new Error(`owner sign-in answered ${signedIn.status()}`);
  const { session, sessionHeader } = (await signedIn.json()) as {
    session: string;
    sessionHeader: string;
  };
  await page.goto(`${ws.base}/page-demo?connect=0`);
  await page.evaluate(
    (value) => sessionStorage.setItem('airlock.ownerSession', value),
    JSON.stringify({ header: sessionHeader, secret: session }),
  );
  await page.goto(`${ws.base}/page-demo`);
  await page.evaluate(() => (window as unknown as { demo: { ready: Promise<void> } }).demo.ready);
  return page;
}

/** An MCP client on /mcp/page acting as its own agent `page-e2e`. */
export async function mcpClient(ws: Workspace): Promise<Client> {
  const { authorization } = await agentHeaders(ws.tk.kernel, 'page-e2e');
  return connectClient(new URL('/mcp/page', ws.base), {
    name: 'page-e2e',
    token: authorization!.slice('Bearer '.length),
  });
}

export interface CallResult {
  isError?: boolean;
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
}
