/**
 * The owner's connect of an OAuth upstream (spec/gateway.md §1 "OAuth
 * upstreams"), on the SDK's `auth()`: `begin` reads the upstream's 401,
 * discovers its authorization server afresh, registers (or uses CIMD or the
 * configured client) and answers the authorization URL, keeping the state
 * and PKCE verifier in the sealed grant; `finish` redeems the code the
 * callback brought (single use, within `PENDING_MS`).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { auth, computeScopeUnion } from '@modelcontextprotocol/client';
import { challenge } from './challenge.js';
import { ConnectRefused } from './errors.js';
import type { Grant, GrantSecrets, GrantStore } from './grant.js';
import { grantProvider, type ClientSettings } from './provider.js';

/** How long an owner's connect waits for its callback. */
export const PENDING_MS = 10 * 60_000;

export interface ConnectContext {
  client: ClientSettings;
  url: string;
  headers: Record<string, string> | undefined;
  read(fresh?: boolean): Promise<Grant | null>;
  write: GrantStore['put'];
}

export interface ConnectFlow {
  /** Starts the owner's connect; the URL to send the owner's browser to. */
  begin(redirectUrl: string): Promise<URL>;
  /** Whether `state` is this upstream's pending connect. */
  pending(state: string): Promise<boolean>;
  /** Completes the owner's connect with the callback's parameters. */
  finish(callback: { code: string; state: string; iss?: string | undefined }): Promise<void>;
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export function connectFlow(context: ConnectContext): ConnectFlow {
  const { client, url, headers, read, write } = context;
  const { upstream, settings, scope } = client;
  return {
    async begin(redirectUrl) {
      const current = (await read(true))?.secrets;
      const work: GrantSecrets =
        current && current.serverUrl === url ? { ...current } : { serverUrl: url };
      // The owner's connect discovers afresh; a registration made for another redirect URL is dropped.
      delete work.discovery;
      delete work.pending;
      if (work.redirectUrl !== redirectUrl && !settings.clientMetadataUrl) delete work.client;
      work.redirectUrl = redirectUrl;
      const state = randomBytes(32).toString('base64url');
      let target: URL | null = null;
      const found = await challenge(url, headers);
      // What the configuration or the upstream's 401 asks, and what it asked for since (step-up).
      const asked = computeScopeUnion(scope ?? found.scope, work.wantedScope);
      const result = await auth(
        grantProvider(client, 'connect', work, { state, onRedirect: (u) => (target = u) }),
        {
          serverUrl: url,
          ...(found.resourceMetadataUrl ? { resourceMetadataUrl: found.resourceMetadataUrl } : {}),
          ...(asked ? { scope: asked } : {}),
          forceReauthorization: true,
        },
      );
      if (result !== 'REDIRECT' || !target || !work.pending)
        throw new ConnectRefused(
          `The upstream '${upstream}' did not ask for an authorization; check its URL and that it requires OAuth.`,
        );
      await write(work, {});
      return target;
    },
    async pending(state) {
      const p = (await read(true))?.secrets.pending;
      return !!p && sameText(p.state, state) && Date.now() - p.createdAt < PENDING_MS;
    },
    async finish({ code, state, iss }) {
      const grant = await read(true);
      const p = grant?.secrets.pending;
      if (!grant || !p || !sameText(p.state, state) || Date.now() - p.createdAt >= PENDING_MS)
        throw new ConnectRefused(
          `No connect of '${upstream}' is waiting for this answer (it expired after 10 minutes, or was answered already); choose Connect again.`,
        );
      const work: GrantSecrets = { ...grant.secrets };
      const result = await auth(grantProvider(client, 'connect', work, { verifier: p.verifier }), {
        serverUrl: url,
        authorizationCode: code,
        ...(iss ? { iss } : {}),
        ...(scope ? { scope } : {}),
      });
      if (result !== 'AUTHORIZED' || !work.tokens)
        throw new ConnectRefused(
          `The authorization server of '${upstream}' gave no token; choose Connect again.`,
        );
      delete work.pending;
      delete work.wantedScope;
      await write(work, { status: 'connected', reason: null, connectedAt: Date.now() });
    },
  };
}
