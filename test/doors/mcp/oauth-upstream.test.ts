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
import { callTool, gatewayWorkspace, type GatewayWorkspace, type Json } from './helpers.js';
import { browse, oauthUpstream, type OAuthUpstream } from './oauth-fixtures.js';
import { waitFor } from '../../helpers/wait.js';
import type { Logger } from '../../../src/kernel/logger.js';
import { fileSealer, KEY_FILE } from '../../../src/doors/mcp/oauth/seal.js';
import { GRANTS, type GrantRow, type GrantSecrets } from '../../../src/doors/mcp/oauth/grant.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A logger that keeps every line it is given, as JSON. */
export function captureLogger(lines: string[] = []): Logger & { lines: string[] } {
  const log =
    (level: string, bindings: Record<string, unknown>) => (first: unknown, msg?: string) =>
      void lines.push(JSON.stringify({ level, ...bindings, first, msg }));
  const make = (bindings: Record<string, unknown>): Logger => ({
    debug: log('debug', bindings),
    info: log('info', bindings),
    warn: log('warn', bindings),
    error: log('error', bindings),
    child: (more) => make({ ...bindings, ...more }),
  });
  return Object.assign(make({}), { lines });
}

export interface OAuthWorkspace {
  up: OAuthUpstream;
  ws: GatewayWorkspace;
  dataDir: string;
  logs: string[];
}

export async function oauthWorkspace(
  options: { accessTokenTtl?: number; upstream?: OAuthUpstream } = {},
): Promise<OAuthWorkspace> {
  const up = options.upstream ?? (await oauthUpstream(options));
  const dataDir = mkdtempSync(join(tmpdir(), 'airlock-oauth-up-'));
  const logger = captureLogger();
  const ws = await gatewayWorkspace({ gh: { url: up.url, oauth: {} } }, { dataDir, logger });
  cleanups.push(async () => {
    await ws.close();
    if (!options.upstream) await up.close();
  });
  return { up, ws, dataDir, logs: logger.lines };
}

/** The owner's connect, start to finish, as the web UI does it (owner bearer here). */
export async function connect(ws: GatewayWorkspace, name = 'gh'): Promise<Json> {
  const started = await ws.rest('POST', `upstreams/${name}/connect`, {});
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const answer = await browse(
    started.body.authorizationUrl as string,
    `${ws.base}/upstream-oauth/callback`,
  );
  const done = await ws.rest('POST', 'upstreams/oauth/callback', answer);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  await waitFor(() => ws.gateway.views().find((v) => v.name === name)?.state === 'running', {
    message: `${name} running`,
  });
  return done.body;
}

/** Every secret the sealed grant holds, opened with the key file (as only Airlock can). */
export async function grantSecrets(o: OAuthWorkspace, name = 'gh'): Promise<GrantSecrets> {
  const row = await o.ws.tk.kernel.store.read((tx) => tx.records.get<GrantRow>(GRANTS, name));
  const plain = await fileSealer(o.dataDir).open(row!.value.sealed, name);
  return JSON.parse(plain!) as GrantSecrets;
}

export const tokensOf = (s: GrantSecrets) =>
  [s.tokens?.access_token, s.tokens?.refresh_token].filter((t): t is string => !!t);

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
