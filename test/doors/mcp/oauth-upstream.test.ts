/**
 * An HTTP upstream that requires OAuth (spec/gateway.md §1 "OAuth
 * upstreams"), against a real authorization server (oidc-provider) on
 * loopback: the owner connects it once (Airlock registers dynamically,
 * PKCE, resource-bound token), agents' calls then work through Airlock, and
 * the upstream's tokens never reach an agent, a log line or the audit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, errorOf, gatewayWorkspace, type Json } from './helpers.js';
import { oauthUpstream, recorder } from './oauth-fixtures.js';
import { cleanups, connect, grantSecrets, oauthWorkspace, tokensOf } from './oauth-helpers.js';
import { agentHeaders } from '../../helpers/principals.js';
import { waitFor } from '../../helpers/wait.js';
import { KEY_FILE } from '../../../src/doors/mcp/oauth/seal.js';
import { GRANTS } from '../../../src/doors/mcp/oauth/grant.js';

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('an OAuth upstream', () => {
  it('waits for the owner to connect it, then serves calls; the owner connects it once', async () => {
    const o = await oauthWorkspace();
    const { ws, up } = o;
    const before = (await ws.rest('GET', 'upstreams')).body.upstreams[0] as Json;
    expect(before.authorization).toMatchObject({ kind: 'oauth', status: 'notConnected' });
    await waitFor(() => ws.gateway.views()[0]!.state === 'unauthorized', {
      message: 'unauthorized',
    });

    const done = await connect(ws);
    expect(done.authorization).toMatchObject({
      kind: 'oauth',
      status: 'connected',
      issuer: up.issuer,
    });
    expect(up.registrations).toBe(1);

    const agent = await ws.agent('alice');
    const listed = await agent.listTools();
    expect(listed.tools.map((t) => t.name)).toContain('gh_whoami');
    const result = await callTool(agent, 'gh_whoami', { name: 'alice' });
    expect(result.content[0]!.text).toBe('hello alice');
  });

  it('keeps its tokens from tools/list, results, logs, the audit and the owner’s view; stores them sealed', async () => {
    const o = await oauthWorkspace();
    const { ws } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    const listed = JSON.stringify(await agent.listTools());
    const whoami = JSON.stringify(await callTool(agent, 'gh_whoami', { name: 'bob' }));
    // The upstream answers with the very header it got: Airlock scrubs the token out.
    const echoed = await callTool(agent, 'gh_echo_auth', {});
    expect(echoed.content[0]!.text).toContain('[REDACTED]');
    const secrets = tokensOf(await grantSecrets(o));
    expect(secrets.length).toBe(2); // an access and a refresh token
    const audit = JSON.stringify((await ws.rest('GET', 'audit')).body);
    expect(audit).toContain('upstream.connected');
    const view = JSON.stringify((await ws.rest('GET', 'upstreams')).body);
    const row = JSON.stringify(await ws.tk.kernel.store.read((tx) => tx.records.get(GRANTS, 'gh')));
    for (const secret of secrets)
      for (const [where, text] of Object.entries({
        listed,
        whoami,
        echoed: JSON.stringify(echoed),
        logs: o.logs.join('\n'),
        audit,
        view,
        row,
      }))
        expect(text.includes(secret), `${where} holds a token`).toBe(false);
    // The key lives in the data folder, the owner's alone.
    expect(statSync(join(o.dataDir, KEY_FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(o.dataDir, KEY_FILE), 'utf8').trim()).toHaveLength(44);
  });
});

describe('an OAuth upstream’s grant over time', () => {
  it('refreshes the access token after the upstream refuses it (401), and the call works', async () => {
    const o = await oauthWorkspace();
    const { ws, up } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    expect((await callTool(agent, 'gh_whoami', { name: 'a' })).content[0]!.text).toBe('hello a');
    const first = await grantSecrets(o);
    await up.revokeAccessTokens();
    const again = await callTool(agent, 'gh_whoami', { name: 'b' });
    expect(again.content[0]!.text).toBe('hello b');
    expect(up.refreshes).toBe(1);
    const second = await grantSecrets(o);
    expect(second.tokens!.access_token).not.toBe(first.tokens!.access_token);
    // Rotated: the old refresh token is spent, the new one kept.
    expect(second.tokens!.refresh_token).not.toBe(first.tokens!.refresh_token);
  });

  it('refreshes ahead of expiry, before the upstream sees an expired token', async () => {
    const o = await oauthWorkspace({ accessTokenTtl: 1 });
    const { ws, up } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    const held = await grantSecrets(o);
    const rejected = up.rejected;
    const refreshes = up.refreshes;
    // Into the token's last half-second (refreshed ahead: at most half its lifetime before expiry).
    await waitFor(() => Date.now() > held.tokens!.obtainedAt + 600, {
      message: 'token near expiry',
    });
    expect((await callTool(agent, 'gh_whoami', { name: 'c' })).content[0]!.text).toBe('hello c');
    expect(up.refreshes).toBeGreaterThan(refreshes);
    expect(up.rejected).toBe(rejected);
  });

  it('revoked at the upstream’s authorization server: the screen shows reconnect and agents get unavailable naming it', async () => {
    const o = await oauthWorkspace();
    const { ws, up } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    expect((await callTool(agent, 'gh_whoami', { name: 'a' })).content[0]!.text).toBe('hello a');
    await up.revokeAll();
    const refused = await callTool(agent, 'gh_whoami', { name: 'b' });
    expect(refused.isError).toBe(true);
    const error = errorOf(refused);
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain("'gh'");
    expect(error.message).toMatch(/owner.*reconnect/i);
    const view = (await ws.rest('GET', 'upstreams')).body.upstreams[0] as Json;
    expect(view.authorization).toMatchObject({ status: 'reconnect' });
    expect(view.state).toBe('unauthorized');
    // Later calls answer the same at once, without a request to the upstream.
    const rejected = up.rejected;
    expect(errorOf(await callTool(agent, 'gh_whoami', { name: 'c' })).code).toBe('unavailable');
    expect(up.rejected).toBe(rejected);

    // The owner reconnects: calls work again, with the same registration.
    await connect(ws);
    expect((await callTool(agent, 'gh_whoami', { name: 'd' })).content[0]!.text).toBe('hello d');
    expect(up.registrations).toBe(1);
    expect(
      ((await ws.rest('GET', 'upstreams')).body.upstreams[0] as Json).authorization,
    ).toMatchObject({ status: 'connected' });
  });

  it('survives a restart: the sealed grant is read back with the key file', async () => {
    const up = await oauthUpstream();
    cleanups.push(() => up.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'airlock-oauth-up-'));
    const first = await gatewayWorkspace({ gh: { url: up.url, oauth: {} } }, { dataDir });
    await connect(first);
    await first.close();
    const second = await gatewayWorkspace({ gh: { url: up.url, oauth: {} } }, { dataDir });
    cleanups.push(() => second.close());
    await waitFor(() => second.gateway.views()[0]!.state === 'running', {
      message: 'running again',
    });
    const agent = await second.agent('alice');
    expect((await callTool(agent, 'gh_whoami', { name: 'e' })).content[0]!.text).toBe('hello e');
    expect(up.registrations).toBe(1);
  });
});

describe('attacks on an OAuth upstream’s grant', () => {
  it('a hostile agent cannot start a connect, finish one, or read the grant', async () => {
    const o = await oauthWorkspace();
    const { ws } = o;
    await connect(ws);
    const agent = await agentHeaders(ws.tk.kernel, 'mallory');
    const started = await ws.rest('POST', 'upstreams/gh/connect', {}, agent);
    expect(started.status).toBe(403);
    expect(started.body.code).toBe('notAuthorized');
    // An owner's connect is waiting: the agent cannot answer it, even with the right state.
    const owner = await ws.rest('POST', 'upstreams/gh/connect', {});
    const state = new URL(owner.body.authorizationUrl as string).searchParams.get('state')!;
    const finished = await ws.rest(
      'POST',
      'upstreams/oauth/callback',
      { state, code: 'stolen' },
      agent,
    );
    expect(finished.status).toBe(403);
    expect((await ws.rest('GET', 'upstreams', undefined, agent)).status).toBe(403);
    // Nothing the agent can reach names a token.
    const secrets = tokensOf(await grantSecrets(o));
    const client = await ws.agent('mallory-mcp');
    const seen = JSON.stringify([
      await client.listTools(),
      await client.listResources().catch((e: unknown) => String(e)),
      await callTool(client, 'gh_echo_auth', {}),
    ]);
    for (const secret of secrets) expect(seen.includes(secret)).toBe(false);
  });

  it('a callback with a state the owner’s connect was not given is refused, even in the owner’s session', async () => {
    // What a page on another local port can do: send the owner's browser to the callback
    // with an answer of its own, which the UI hands on with the owner's session.
    const o = await oauthWorkspace();
    const { ws } = o;
    await ws.rest('POST', 'upstreams/gh/connect', {});
    const forged = await ws.rest('POST', 'upstreams/oauth/callback', {
      state: 'x'.repeat(43),
      code: 'attacker-code',
    });
    expect(forged.status).toBeGreaterThanOrEqual(400);
    expect(forged.status).toBeLessThan(500);
    const view = (await ws.rest('GET', 'upstreams')).body.upstreams[0] as Json;
    expect(view.authorization).toMatchObject({ status: 'notConnected' });
  });

  it('a hostile upstream naming other metadata in its 401 gets no token sent elsewhere; the owner must reconnect', async () => {
    const o = await oauthWorkspace();
    const { ws, up } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    expect((await callTool(agent, 'gh_whoami', { name: 'a' })).content[0]!.text).toBe('hello a');
    const evil = await recorder(up.url);
    cleanups.push(() => evil.close());
    const before = tokensOf(await grantSecrets(o));
    up.hostile.resourceMetadata = `${evil.base}/.well-known/oauth-protected-resource/mcp`;
    const refused = await callTool(agent, 'gh_whoami', { name: 'b' });
    expect(errorOf(refused).code).toBe('unavailable');
    expect(errorOf(refused).message).toContain("'gh'");
    const after = tokensOf(await grantSecrets(o).catch(() => ({ serverUrl: '' })));
    const sent = evil.seen.join('\n');
    for (const secret of [...before, ...after]) expect(sent.includes(secret)).toBe(false);
    expect(sent).not.toMatch(/authorization/i);
  });

  it('a hostile upstream redirecting to another origin gets no token sent there', async () => {
    const o = await oauthWorkspace();
    const { ws, up } = o;
    await connect(ws);
    const agent = await ws.agent('alice');
    const evil = await recorder(up.url);
    cleanups.push(() => evil.close());
    up.hostile.redirectTo = `${evil.base}/mcp`;
    const refused = await callTool(agent, 'gh_whoami', { name: 'b' });
    expect(refused.isError).toBe(true);
    expect(evil.seen.join('\n')).not.toMatch(/authorization/i);
  });

  it('a grant is used only for the URL it was made for: an upstream moved to another origin gets no token', async () => {
    const up = await oauthUpstream();
    cleanups.push(() => up.close());
    const evil = await recorder(up.url);
    cleanups.push(() => evil.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'airlock-oauth-up-'));
    const first = await gatewayWorkspace({ gh: { url: up.url, oauth: {} } }, { dataDir });
    await connect(first);
    await first.close();
    const moved = await gatewayWorkspace(
      { gh: { url: `${evil.base}/mcp`, oauth: {} } },
      { dataDir },
    );
    cleanups.push(() => moved.close());
    await waitFor(() => moved.gateway.views()[0]!.state === 'unauthorized', {
      message: 'unauthorized',
    });
    const view = (await moved.rest('GET', 'upstreams')).body.upstreams[0] as Json;
    expect(view.authorization).toMatchObject({ status: 'reconnect' });
    expect(evil.seen.join('\n')).not.toMatch(/authorization/i);
  });
});
