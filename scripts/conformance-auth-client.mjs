#!/usr/bin/env node
/**
 * The driver the MCP conformance suite's client `auth` scenarios run
 * (`conformance client --suite auth --command "node scripts/conformance-auth-client.mjs"`;
 * the suite appends its server URL): Airlock's own upstream OAuth client
 * (the mcp door, spec/gateway.md §1 "OAuth upstreams") against the suite's
 * mock MCP server and authorization server, end to end through Airlock.
 *
 * 1. A workspace in a fresh data folder (SQLite store, kernel, HTTP app on
 *    loopback) with one upstream `up` = the URL, `oauth` with a client ID
 *    metadata document URL (used when the server offers CIMD, else Airlock
 *    registers dynamically).
 * 2. The owner's connect, as the web UI makes it: `POST upstreams/up/connect`,
 *    the owner's browser following the authorization URL (the suite's
 *    authorization server consents at once and redirects to Airlock's
 *    callback page), `POST upstreams/oauth/callback` with its parameters.
 * 3. An agent lists the upstream's tools through Airlock and calls the first
 *    (its effect set to read by the owner, so the policy does not ask).
 *
 * Exit 0 when the connect and the calls worked, 1 otherwise (the suite
 * judges its own checks either way). Needs `npm run build` (dist/).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => import(join(root, 'dist', path));
const { createMcpDoorsFrom, parseUpstreams } = await dist('doors/mcp/index.js');
const { createKernel, createEventBus, silentLogger } = await dist('kernel/index.js');
const { openStore } = await dist('store/open.js');
const { createHttpApp } = await dist('transport/http/http-app.js');

/** The client ID metadata document URL the suite's CIMD scenario expects. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const NAME = 'up';

const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '(none)';
const say = (...parts) => console.log(`[airlock ${scenario}]`, ...parts);
/** Scenario data (a pre-registered client's id and secret). */
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');

async function workspace(data) {
  const { doors } = createMcpDoorsFrom({
    upstreams: parseUpstreams({
      [NAME]: {
        url: serverUrl,
        oauth: {
          clientMetadataUrl: CLIENT_METADATA_URL,
          // A pre-registered client, as the owner would configure it (the secret from the environment).
          ...(context.client_id ? { clientId: context.client_id } : {}),
          ...(context.client_secret ? { clientSecret: '${CONFORMANCE_CLIENT_SECRET}' } : {}),
        },
      },
    }),
    env: { CONFORMANCE_CLIENT_SECRET: context.client_secret },
    logger: silentLogger,
    dataDir: data,
    cacheDir: join(data, 'mcp'),
  });
  const { store, blobs } = await openStore({ data });
  const events = await createEventBus();
  const kernel = createKernel({ store, blobs, events, logger: silentLogger });
  for (const door of doors) kernel.mount(door);
  await kernel.start();
  const app = createHttpApp({ kernel, logger: silentLogger });
  const base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  const ownerToken = `ok_${randomBytes(24).toString('base64url')}`;
  await kernel.principals.setOwnerToken(ownerToken);
  const owner = { authorization: `Bearer ${ownerToken}` };
  const rest = async (method, path, body) => {
    const res = await fetch(`${base}/api/v1/${path}`, {
      method,
      headers: { ...owner, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    kernel,
    base,
    rest,
    async close() {
      await app.close();
      await kernel.close();
      await events.close();
      await store.close();
    },
  };
}

/** The owner's browser: follows the authorization server's redirects to Airlock's callback page. */
async function follow(authorizationUrl, callbackPrefix) {
  let next = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(callbackPrefix)) return Object.fromEntries(new URL(next).searchParams);
    const res = await fetch(next, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (!location)
      throw new Error(`the authorization server answered ${res.status} without a redirect`);
    next = new URL(location, next).href;
  }
  throw new Error('too many redirects at the authorization server');
}

async function waitRunning(rest) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [view] = (await rest('GET', 'upstreams')).body.upstreams;
    if (view.state === 'running' || view.state === 'unauthorized') return view;
    if (Date.now() > deadline) throw new Error(`the upstream is ${view.state}: ${view.lastError}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The owner's Connect (or Reconnect), start to finish; the upstream's view once it settles. */
async function connect(ws) {
  const started = await ws.rest('POST', `upstreams/${NAME}/connect`, {});
  if (started.status !== 200) throw new Error(`connect: ${JSON.stringify(started.body)}`);
  say('authorization URL', started.body.authorizationUrl);
  const answer = await follow(started.body.authorizationUrl, `${ws.base}/upstream-oauth/callback`);
  const done = await ws.rest('POST', 'upstreams/oauth/callback', answer);
  if (done.status !== 200) throw new Error(`callback: ${JSON.stringify(done.body)}`);
  say('connected', JSON.stringify(done.body.authorization));
  return waitRunning(ws.rest);
}

/** A call Airlock refused because the upstream waits for the owner's reconnect. */
function needsReconnect(result) {
  if (!result.isError) return false;
  try {
    return JSON.parse(result.content[0]?.text ?? '{}').state === 'unauthorized';
  } catch {
    return false;
  }
}

async function run(ws) {
  let view = await connect(ws);
  // The upstream asked for more (a new authorization server, more scope) at once: the owner reconnects.
  if (view.state === 'unauthorized') {
    say('the owner reconnects:', view.lastError);
    view = await connect(ws);
  }
  if (view.state !== 'running') throw new Error(`the upstream is ${view.state}: ${view.lastError}`);
  for (const tool of view.tools)
    await ws.rest(
      'PUT',
      `upstreams/${NAME}/tools/${encodeURIComponent(tool.upstreamTool)}/effect`,
      {
        effect: 'read',
      },
    );

  const made = await ws.kernel.principals.addAgent('conformance');
  const client = new Client({ name: 'airlock-conformance-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ws.base}/mcp/${NAME}`), {
      requestInit: { headers: { authorization: `Bearer ${made.token}` } },
    }),
  );
  const { tools } = await client.listTools();
  say('tools through Airlock:', tools.map((t) => t.name).join(', ') || '(none)');
  let ok = true;
  const first = tools.find((t) => !/_(search_tools|call_tool)$/.test(t.name));
  if (first) {
    let result = await client.callTool({ name: first.name, arguments: {} });
    say('called', first.name, '→', JSON.stringify(result.content).slice(0, 300));
    // Refused for want of a grant the owner alone can give (step-up, a new server): the owner reconnects once.
    if (needsReconnect(result)) {
      say('the owner reconnects');
      await connect(ws);
      result = await client.callTool({ name: first.name, arguments: {} });
      say('called again', first.name, '→', JSON.stringify(result.content).slice(0, 300));
    }
    ok = !result.isError;
  }
  await client.close();
  return ok;
}

const data = mkdtempSync(join(tmpdir(), 'airlock-conformance-auth-'));
let code = 1;
let ws;
try {
  ws = await workspace(data);
  code = (await run(ws)) ? 0 : 1;
} catch (error) {
  say('failed:', error instanceof Error ? error.message : String(error));
} finally {
  await ws?.close().catch(() => undefined);
  rmSync(data, { recursive: true, force: true });
}
process.exit(code);
