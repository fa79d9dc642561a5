/**
 * The owner's side of an OAuth upstream in tests: a workspace with one
 * OAuth upstream (`gh`) over the oidc-provider fixture, the owner's connect
 * start to finish, and the sealed grant opened as only Airlock can.
 */
import { expect } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayWorkspace, type GatewayWorkspace, type Json } from './helpers.js';
import { browse, oauthUpstream, type OAuthUpstream } from './oauth-fixtures.js';
import { waitFor } from '../../helpers/wait.js';
import type { Logger } from '../../../src/kernel/logger.js';
import { fileSealer } from '../../../src/doors/mcp/oauth/seal.js';
import { GRANTS, type GrantRow, type GrantSecrets } from '../../../src/doors/mcp/oauth/grant.js';

/** Closed after each test by the test file. */
export const cleanups: Array<() => Promise<void>> = [];

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
