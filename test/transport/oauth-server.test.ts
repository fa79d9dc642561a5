/**
 * Airlock as the authorization and resource server of remote MCP clients
 * (issue 29, authority.md §7), against `airlock serve` from nothing: the
 * official SDK v2 client discovers the metadata from the 401, names itself
 * by a metadata document this test serves on loopback, the owner consents
 * (the consent page's own route), the code is exchanged with PKCE, tools
 * are listed and called as the agent the consent made, tokens refresh, and
 * the owner's revoke ends them. Then what an attacker would try.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../helpers/servers.js';
import {
  authorize,
  Browser,
  cimdHost,
  connectFromNothing,
  connectWithOAuth,
  decideConsent,
  MemoryProvider,
  type CimdHost,
} from '../helpers/oauth-client.js';

let served: Served;
let base: string;
let owner: string;
let cimd: CimdHost;
const dirs: string[] = [];

beforeAll(async () => {
  const data = mkdtempSync(join(tmpdir(), 'airlock-oauth-'));
  dirs.push(data);
  served = await startServe(['--doors', 'ledger,notes', '--data', data]);
  base = served.url;
  owner = served.ownerToken!;
  cimd = await cimdHost('Remote Agent App');
}, 60_000);
afterAll(async () => {
  served?.child.kill('SIGTERM');
  await served?.exited;
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await cimd?.close();
});

const ownerGet = async (path: string) =>
  (await fetch(`${base}/api/v1/${path}`, { headers: { authorization: `Bearer ${owner}` } })).json();

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** An authorization URL by hand (for the negative cases the SDK would never send). */
function authUrl(params: Record<string, string>): string {
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: cimd.clientId,
    redirect_uri: cimd.redirectUri,
    scope: 'mcp',
    state: 's1',
    resource: `${base}/mcp/ledger`,
    ...params,
  }))
    url.searchParams.set(k, v);
  return url.href;
}

async function tokenRequest(body: Record<string, string>) {
  const res = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: cimd.clientId, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** A code for `resource`, by hand, approved by the owner; with its PKCE verifier. */
async function codeFor(resource: string, agent = 'handmade', extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const query = await authorize(
    base,
    owner,
    new URL(
      authUrl({ resource, code_challenge: challenge, code_challenge_method: 'S256', ...extra }),
    ),
    cimd.redirectUri,
    { decision: 'approve', agent },
  );
  return { code: query.get('code')!, verifier };
}

describe('discovery', () => {
  it('/mcp answers 401 naming its protected-resource metadata', async () => {
    const res = await fetch(`${base}/mcp/notes`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(
      `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/notes"`,
    );
  });

  it('the protected-resource metadata names the resource and this authorization server', async () => {
    for (const path of ['', '/mcp', '/mcp/notes']) {
      const res = await fetch(`${base}/.well-known/oauth-protected-resource${path}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { resource: string; authorization_servers: string[] };
      expect(body.resource).toBe(`${base}${path || '/mcp'}`);
      expect(body.authorization_servers).toEqual([base]);
    }
    expect((await fetch(`${base}/.well-known/oauth-protected-resource/mcp/nothing`)).status).toBe(
      404,
    );
  });

  it('the authorization server metadata says PKCE S256, CIMD, no registration by default', async () => {
    const meta = (await (
      await fetch(`${base}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(meta.issuer).toBe(base);
    expect(meta.authorization_endpoint).toBe(`${base}/oauth/authorize`);
    expect(meta.token_endpoint).toBe(`${base}/oauth/token`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.client_id_metadata_document_supported).toBe(true);
    expect(meta.registration_endpoint).toBeUndefined();
  });
});

describe('the SDK v2 client from nothing', () => {
  let provider: MemoryProvider;

  it('connects through the owner consent, lists and calls tools as the agent the consent made', async () => {
    provider = new MemoryProvider(cimd);
    const client = await connectFromNothing(`${base}/mcp/ledger`, base, owner, provider, {
      decision: 'approve',
      agent: 'remote-app',
    });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('ledger_echo');
    const result = await client.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } });
    expect(result.isError).toBeFalsy();
    await client.close();
    const agents = (await ownerGet('agents')) as { agents: { name: string }[] };
    expect(agents.agents.map((a) => a.name)).toContain('remote-app');
    const oauthAgents = (await ownerGet('oauth/agents')) as {
      agents: Record<string, { clientId: string; clientName: string; tokens: number }>;
    };
    expect(oauthAgents.agents['remote-app']).toMatchObject({
      clientId: cimd.clientId,
      clientName: 'Remote Agent App',
      // One access token and one refresh token.
      tokens: 2,
    });
    const audit = (await ownerGet('audit?limit=50')) as {
      entries: { tool: string; connection: string; result: string }[];
    };
    expect(audit.entries.some((e) => e.tool === 'oauth.consent' && e.result === 'ok')).toBe(true);
  });

  it('refreshes its token and goes on working', async () => {
    const before = provider.saved!;
    expect(before.refresh_token).toBeTruthy();
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(before.refresh_token);
    provider.saved = refreshed.body as never;
    const client = await connectWithOAuth(`${base}/mcp/ledger`, provider);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('is refused once the owner revokes its agent', async () => {
    const revoked = await fetch(`${base}/api/v1/agents/remote-app`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${owner}` },
    });
    expect(revoked.status).toBe(200);
    const res = await fetch(`${base}/mcp/ledger`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.text()).toMatch(/revoked by the owner/);
  });
});

describe('what an attacker tries', () => {
  it('a token for /mcp/ledger is refused on /mcp/notes', async () => {
    const { code, verifier } = await codeFor(`${base}/mcp/ledger`);
    const token = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: cimd.redirectUri,
    });
    expect(token.status).toBe(200);
    const call = (path: string) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token.body.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        }),
      });
    expect((await call('/mcp/ledger')).status).toBe(200);
    const other = await call('/mcp/notes');
    expect(other.status).toBe(401);
    expect(await other.text()).toMatch(/not .*\/mcp\/notes/);
    // …and it is no owner credential either.
    const rest = await fetch(`${base}/api/v1/agents`, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    });
    expect(rest.status).toBe(401);
  });

  it('a request that names no scope gets the one there is', async () => {
    const { code, verifier } = await codeFor(`${base}/mcp/ledger`, 'no-scope', { scope: '' });
    const token = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: cimd.redirectUri,
    });
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('mcp');
  });

  it('a wrong PKCE verifier gets no token', async () => {
    const { code } = await codeFor(`${base}/mcp/ledger`);
    const token = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: pkce().verifier,
      redirect_uri: cimd.redirectUri,
    });
    expect(token.status).toBe(400);
    expect(token.body.error).toBe('invalid_grant');
  });

  it('an authorization request without PKCE, or with plain PKCE, is refused', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' },
    ];
    for (const extra of attempts) {
      const browser = new Browser();
      const res = await browser.get(authUrl(extra));
      const location = res.headers.get('location') ?? '';
      expect(location.startsWith(cimd.redirectUri)).toBe(true);
      expect(new URL(location).searchParams.get('error')).toBe('invalid_request');
    }
  });

  it('a redirect URI not in the client metadata is refused without redirecting there', async () => {
    const browser = new Browser();
    const res = await browser.get(
      authUrl({
        redirect_uri: 'http://localhost:1/steal',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(await res.text()).toMatch(/redirect_uri/);
  });

  it('a reused refresh token ends its whole family', async () => {
    const { code, verifier } = await codeFor(`${base}/mcp/ledger`, 'family');
    const first = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: cimd.redirectUri,
    });
    const second = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
    });
    expect(second.status).toBe(200);
    const replay = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    // The newest tokens of that family are gone too.
    const after = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: second.body.refresh_token!,
    });
    expect(after.status).toBe(400);
    const res = await fetch(`${base}/mcp/ledger`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${second.body.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });

  it('the owner declining sends the client an access_denied, and no agent is made', async () => {
    const { challenge } = pkce();
    const query = await authorize(
      base,
      owner,
      new URL(authUrl({ code_challenge: challenge, code_challenge_method: 'S256' })),
      cimd.redirectUri,
      { decision: 'deny', agent: 'never-made' },
    );
    expect(query.get('error')).toBe('access_denied');
    const agents = (await ownerGet('agents')) as { agents: { name: string }[] };
    expect(agents.agents.map((a) => a.name)).not.toContain('never-made');
  });

  it('an agent cannot decide a connection, nor read it', async () => {
    const browser = new Browser();
    const consent = await browser.follow(
      authUrl({ code_challenge: pkce().challenge, code_challenge_method: 'S256' }),
      (u) => u.pathname.startsWith('/oauth/consent/'),
    );
    const id = consent.pathname.slice('/oauth/consent/'.length);
    const asAgent = await fetch(`${base}/api/v1/oauth/requests/${id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${served.agentToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', agent: 'hijack' }),
    });
    expect(asAgent.status).toBe(403);
    const anonymous = await fetch(`${base}/api/v1/oauth/requests/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve', agent: 'hijack' }),
    });
    expect(anonymous.status).toBe(401);
    expect((await fetch(`${base}/api/v1/oauth/requests/${id}`)).status).toBe(401);
    // The owner sees what it asks for.
    const shown = (await ownerGet(`oauth/requests/${id}`)) as Record<string, unknown>;
    expect(shown).toMatchObject({
      resource: `${base}/mcp/ledger`,
      doors: ['ledger'],
      client: {
        name: 'Remote Agent App',
        redirectHost: new URL(cimd.redirectUri).host,
        identifiedBy: 'metadata document',
      },
    });
  });

  it('a decision on a request that is gone, or already answered, says so', async () => {
    const res = await decideConsent(base, owner, 'no-such-request', { decision: 'approve' });
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/no longer waiting/);
    const consent = await new Browser().follow(
      authUrl({ code_challenge: pkce().challenge, code_challenge_method: 'S256' }),
      (u) => u.pathname.startsWith('/oauth/consent/'),
    );
    const id = consent.pathname.slice('/oauth/consent/'.length);
    expect((await decideConsent(base, owner, id, { decision: 'deny' })).status).toBe(200);
    const again = await decideConsent(base, owner, id, { decision: 'approve', agent: 'late' });
    expect(again.status).toBe(404);
    expect(await again.text()).toMatch(/no longer waiting/);
  });

  it('registration is off unless the owner turns it on', async () => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: ['http://localhost:1/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(res.status).toBe(404);
  });

  it('refusals are audited', async () => {
    const audit = (await ownerGet('audit?limit=200')) as {
      entries: { tool: string; result: string }[];
    };
    const refused = audit.entries.filter(
      (e) => e.tool.startsWith('oauth.') && e.result.startsWith('refused'),
    );
    expect(refused.map((e) => e.tool)).toEqual(
      expect.arrayContaining(['oauth.token', 'oauth.resource', 'oauth.authorization']),
    );
  });
});

describe('on a deployment the owner reaches by name (not loopback)', () => {
  it('a client ID on a loopback or private address is refused, and audited', async () => {
    const { request } = await import('node:http');
    const { createHttpApp } = await import('../../src/transport/http/http-app.js');
    const { createOAuthServer } = await import('../../src/transport/oauth/server.js');
    const { silentLogger } = await import('../../src/kernel/logger.js');
    const { testKernel } = await import('../helpers/kernel.js');
    const tk = await testKernel([]);
    const oauth = createOAuthServer({ kernel: tk.kernel, logger: silentLogger });
    const app = createHttpApp({
      kernel: tk.kernel,
      logger: silentLogger,
      oauth,
      allowedHosts: ['airlock.example.test'],
    });
    const { port } = await app.listen(0, '127.0.0.1');
    await oauth.start('https://airlock.example.test', { proxy: true });
    const get = (path: string) =>
      new Promise<{ status: number; location: string | undefined; body: string }>(
        (resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port,
              path,
              headers: { host: 'airlock.example.test', 'x-forwarded-proto': 'https' },
            },
            (res) => {
              let body = '';
              res.on('data', (d: Buffer) => (body += d.toString()));
              res.on('end', () =>
                resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }),
              );
            },
          );
          req.on('error', reject);
          req.end();
        },
      );
    try {
      const meta = await get('/.well-known/oauth-protected-resource');
      expect(JSON.parse(meta.body)).toMatchObject({
        resource: 'https://airlock.example.test/mcp',
        authorization_servers: ['https://airlock.example.test'],
      });
      for (const clientId of [
        cimd.clientId,
        'https://10.0.0.1/client.json',
        'https://127.0.0.1/c.json',
      ]) {
        const query = new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: cimd.redirectUri,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        });
        const res = await get(`/oauth/authorize?${query}`);
        expect(res.status, clientId).toBe(400);
        expect(res.location).toBeUndefined();
        expect(res.body).toMatch(/client/i);
      }
      const audit = await tk.kernel.audit.list({ order: 'desc', limit: 20 });
      expect(audit.filter((e) => e.tool === 'oauth.authorization').length).toBeGreaterThanOrEqual(
        3,
      );
    } finally {
      await app.close();
      await tk.close();
    }
  });
});

describe('with dynamic registration turned on, the 2026-07-28 era', () => {
  it('a client registers itself, is approved and calls tools; the page says nobody vouches for its name', async () => {
    const { writeFileSync } = await import('node:fs');
    const { Client, StreamableHTTPClientTransport, UnauthorizedError } =
      await import('@modelcontextprotocol/client');
    const data = mkdtempSync(join(tmpdir(), 'airlock-oauth-dcr-'));
    dirs.push(data);
    const config = join(data, 'airlock.json');
    writeFileSync(config, JSON.stringify({ oauth: { dynamicRegistration: true } }));
    const dcr = await startServe(['--doors', 'ledger', '--data', data, '--config', config]);
    const registered = new MemoryProvider(cimd, 'register');
    const url = new URL(`${dcr.url}/mcp`);
    const modern = { versionNegotiation: { mode: { pin: '2026-07-28' } } } as const;
    const transport = new StreamableHTTPClientTransport(url, { authProvider: registered });
    const first = await new Client({ name: 'dcr', version: '1' }, modern).connect(transport).then(
      () => null,
      (e: unknown) => e,
    );
    expect(first).toBeInstanceOf(UnauthorizedError);
    expect(registered.info?.client_id).toBeTruthy();
    expect(registered.info?.client_id).not.toBe(cimd.clientId);
    const browser = new Browser();
    const consent = await browser.follow(registered.authorizationUrl!.href, (u) =>
      u.pathname.startsWith('/oauth/consent/'),
    );
    const id = consent.pathname.slice('/oauth/consent/'.length);
    const shown = (await (
      await fetch(`${dcr.url}/api/v1/oauth/requests/${id}`, {
        headers: { authorization: `Bearer ${dcr.ownerToken!}` },
      })
    ).json()) as { client: { identifiedBy: string }; doors: string[] };
    expect(shown.client.identifiedBy).toBe('registration');
    expect(shown.doors).toEqual(['ledger']);
    const decided = await decideConsent(dcr.url, dcr.ownerToken!, id, {
      decision: 'approve',
      agent: 'registered',
    });
    const { redirectTo } = (await decided.json()) as { redirectTo: string };
    const back = await browser.follow(new URL(redirectTo, dcr.url).href, (u) =>
      u.href.startsWith(cimd.redirectUri),
    );
    await transport.finishAuth(back.searchParams);
    const client = new Client({ name: 'dcr', version: '1' }, modern);
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: registered }));
    const echoed = await client.callTool({ name: 'ledger_echo', arguments: { text: 'modern' } });
    expect(echoed.isError).toBeFalsy();
    await client.close();
    dcr.child.kill('SIGTERM');
    await dcr.exited;
  });
});
