import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { BRIDGE_TOKEN, openDemo, startWorkspace, type Workspace } from './browser-helpers.js';
import { launchChromium } from '../../helpers/browser.js';
import { holdsFor } from '../../helpers/wait.js';
import { fakeRelay } from './fake-relay.js';
import { createHttpApp } from '../../../src/transport/http/http-app.js';
import { silentLogger } from '../../../src/kernel/logger.js';
import { agentHeaders, ownerHeaders } from '../../helpers/principals.js';

let ws: Workspace;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [ws, browser] = await Promise.all([startWorkspace(), launchChromium()]);
  page = await openDemo(browser, ws);
});
afterAll(async () => {
  await browser?.close();
  await ws?.close();
});

describe('the bridge in the browser', () => {
  type Bridge = {
    connect(url: string, o?: Record<string, unknown>): Promise<void>;
    disconnect(): void;
    isConnected(): boolean;
  };
  const blank = async () => {
    const p = await browser.newPage();
    await p.goto(`${ws.base}/page-demo?connect=0`);
    await p.waitForFunction(() => 'bridge' in window);
    return p;
  };
  const connectError = (p: Page, url: string, options: Record<string, unknown>) =>
    p.evaluate(
      ({ url, options }) =>
        (window as unknown as { bridge: Bridge }).bridge.connect(url, options).then(
          () => 'connected',
          (e: { code?: string }) => e.code ?? String(e),
        ),
      { url, options },
    );

  it('fails without a token, and refuses ws:// off loopback', async () => {
    const p = await blank();
    expect(await connectError(p, 'ws://127.0.0.1:1', {})).toBe('WU_MCP_TOKEN_REQUIRED');
    expect(await connectError(p, 'ws://example.com:19100', { token: BRIDGE_TOKEN })).toBe(
      'WU_MCP_INSECURE_URL',
    );
    expect(await connectError(p, 'ws://example.com:19100', { insecure: true })).toBe(
      'WU_MCP_INSECURE_URL',
    );
    expect(await connectError(p, 'wss://example.com', { insecure: true })).toBe(
      'WU_MCP_TOKEN_REQUIRED',
    );
    await p.close();
  });

  it('a second page cannot take over the active bridge (WU_MCP_BRIDGE_ACTIVE)', async () => {
    const p = await blank();
    const { url } = (await (
      await fetch(`${ws.base}/api/v1/page/bridge-token`, { headers: ws.owner })
    ).json()) as {
      url: string;
    };
    expect(await connectError(p, url, { token: BRIDGE_TOKEN })).toBe('WU_MCP_BRIDGE_ACTIVE');
    expect(
      await page.evaluate(() => (window as unknown as { bridge: Bridge }).bridge.isConnected()),
    ).toBe(true);
    await p.close();
  });

  it('drops a relay that cannot prove the token', async () => {
    const liar = await fakeRelay({ token: BRIDGE_TOKEN, lie: true });
    const p = await blank();
    expect(await connectError(p, liar.url, { token: BRIDGE_TOKEN })).toBe('WU_MCP_AUTH_FAILED');
    expect(
      await p.evaluate(() => (window as unknown as { bridge: Bridge }).bridge.isConnected()),
    ).toBe(false);
    expect(liar.connections).toBe(1);
    await p.close();
    await liar.close();
  });

  it('authenticates without crypto.subtle (not a secure context) using its own SHA-256', async () => {
    const relay = await fakeRelay({ token: BRIDGE_TOKEN });
    const p = await blank();
    await p.evaluate(() => Object.defineProperty(crypto, 'subtle', { value: undefined }));
    expect(await connectError(p, relay.url, { token: BRIDGE_TOKEN })).toBe('connected');
    expect(relay.authenticated).toBe(1);
    await p.close();
    await relay.close();
  });

  it('reconnects after an accidental drop, and disconnect() stops that and releases its interceptors', async () => {
    const relay = await fakeRelay({ token: BRIDGE_TOKEN });
    const p = await blank();
    const nativeLog = () => p.evaluate(() => console.log.toString().includes('[native code]'));
    expect(await connectError(p, relay.url, { token: BRIDGE_TOKEN })).toBe('connected');
    expect(await nativeLog()).toBe(false);
    relay.sockets[0]!.terminate();
    await expect.poll(() => relay.authenticated, { timeout: 5000 }).toBe(2);
    await expect
      .poll(() => p.evaluate(() => (window as unknown as { bridge: Bridge }).bridge.isConnected()))
      .toBe(true);
    // Never a second socket while connected.
    expect(await connectError(p, relay.url, { token: BRIDGE_TOKEN })).toBe('connected');
    expect(relay.connections).toBe(2);
    await p.evaluate(() => (window as unknown as { bridge: Bridge }).bridge.disconnect());
    expect(await nativeLog()).toBe(true);
    // No reconnect may follow: watch for longer than the bridge's first reconnect
    // delay (250 ms, jittered up to 312 ms) that a drop would have scheduled.
    await holdsFor(() => relay.connections === 2, 700, {
      message: 'no new connection after disconnect()',
    });
    expect(relay.connections).toBe(2);
    await p.close();
    await relay.close();
  });

  it('keeps the token out of URLs, storage, cookies and the served bridge', async () => {
    const state = await page.evaluate(() => ({
      href: location.href,
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      cookie: document.cookie,
    }));
    expect(JSON.stringify(state)).not.toContain(BRIDGE_TOKEN);
    for (const path of ['/bridge.js', '/bridge/index.js', '/bridge/connection.js', '/page-demo']) {
      const res = await fetch(`${ws.base}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text()).not.toContain(BRIDGE_TOKEN);
    }
    expect((await fetch(`${ws.base}/bridge.js`)).headers.get('content-type')).toContain(
      'javascript',
    );
  });

  it('gives the bridge token only to same-origin requests, even the owner', async () => {
    const ok = await fetch(`${ws.base}/api/v1/page/bridge-token`, { headers: ws.owner });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({
      url: `ws://127.0.0.1:${ws.door.relay()!.address()!.port}`,
      token: BRIDGE_TOKEN,
      versions: [2, 1],
    });
    const foreign = await fetch(`${ws.base}/api/v1/page/bridge-token`, {
      headers: { ...ws.owner, origin: 'http://127.0.0.1:1' },
    });
    expect(foreign.status).toBe(403);
    const crossSite = await fetch(`${ws.base}/api/v1/page/bridge-token`, {
      headers: { ...ws.owner, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
  });

  it('gives the bridge token to the owner only: an agent token gets 403, no credential 401', async () => {
    const guarded = createHttpApp({ kernel: ws.tk.kernel, logger: silentLogger });
    const { port } = await guarded.listen(0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${port}/api/v1/page/bridge-token`;
      const owner = await ownerHeaders(ws.tk.kernel);
      const agent = await agentHeaders(ws.tk.kernel, 'page-agent');
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: agent })).status).toBe(403);
      const ok = await fetch(url, { headers: owner });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { token: string }).token).toBe(BRIDGE_TOKEN);
    } finally {
      await guarded.close();
    }
  });
});
