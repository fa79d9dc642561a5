/**
 * Airlock as the OAuth client of one HTTP upstream (spec/gateway.md §1
 * "OAuth upstreams"), on the SDK's own helpers (`auth()` does discovery,
 * CIMD or dynamic registration, PKCE, the code exchange and refresh):
 *
 * - `begin` / `finish`: the owner's connect. `begin` discovers the
 *   upstream's authorization server afresh, registers if needed, and
 *   returns the authorization URL to send the owner's browser to; the
 *   state and PKCE verifier wait in the sealed grant; `finish` redeems the
 *   code the callback brought.
 * - `provider`: what the upstream's transport asks for a token on each
 *   request. It refreshes ahead of expiry and after a 401, one refresh at a
 *   time, and never starts an authorization or a registration: when the
 *   grant cannot be refreshed it is marked `reconnect` and the call fails
 *   with `ReconnectRequired`.
 *
 * The authorization server found at connect is pinned (its discovery state
 * is kept), and tokens are stamped with its issuer, so a later 401 naming
 * other metadata cannot redirect a token or a refresh elsewhere; a grant is
 * used only for the URL it was made for. Tokens go to the upstream URL only,
 * with the SDK's same-origin redirect policy.
 */
import { auth, computeScopeUnion, type AuthProvider } from '@modelcontextprotocol/client';
import { connectFlow, type ConnectFlow } from './connect.js';
import { ReconnectRequired } from './errors.js';
import type { Grant, GrantSecrets, GrantStore } from './grant.js';
import { grantProvider, type ClientSettings } from './provider.js';
import type { OAuthSettings } from '../config.js';

export { authorizationFailure, ConnectRefused, ReconnectRequired } from './errors.js';
export { PENDING_MS } from './connect.js';

/** A token this close to expiry (at most half its lifetime) is refreshed before it is sent. */
export const REFRESH_AHEAD_MS = 60_000;
/** While blocked, the store is read again at most this often (another instance may have connected it). */
const RECHECK_MS = 2_000;

export interface AuthorizationView {
  kind: 'oauth';
  status: 'notConnected' | 'connected' | 'reconnect';
  reason: string | null;
  /** The authorization server's issuer. */
  issuer: string | null;
  scope: string | null;
  expiresAt: number | null;
  connectedAt: number | null;
}

export interface UpstreamAuthorization extends ConnectFlow {
  /** For the upstream's transport: the bearer token, refreshed when needed. */
  readonly provider: AuthProvider;
  /** Why the upstream cannot be connected now (the owner must connect it), or null. */
  blocked(): Promise<string | null>;
  view(): Promise<AuthorizationView>;
  /**
   * Marks the grant `reconnect` (the upstream refused its token even after a
   * refresh, or asks for more scope: the owner's reconnect then asks for it too).
   */
  refuse(reason: string, scope?: string): Promise<void>;
}

export interface UpstreamAuthorizationOptions {
  upstream: string;
  url: string;
  settings: OAuthSettings;
  grants: GrantStore;
  /** The upstream's configured headers (sent with the probe that finds its 401). */
  headers?: Record<string, string> | undefined;
  /** Every secret value the grant holds, each time it is read or changed (for scrubbing). */
  onSecrets(values: string[]): void;
}

/** The grant's tokens when it may be used for `url` now. */
const usableFor = (url: string, grant: Grant | null) =>
  grant?.row.status === 'connected' && grant.secrets.serverUrl === url && grant.secrets.tokens
    ? grant.secrets.tokens
    : null;

/** In the last minute of its life (or the last half, for a token that lives less than two). */
function expiring(tokens: GrantSecrets['tokens'] | null): boolean {
  if (!tokens?.expires_in) return false;
  const lifetime = tokens.expires_in * 1000;
  const ahead = Math.min(REFRESH_AHEAD_MS, lifetime / 2);
  return tokens.obtainedAt + lifetime - Date.now() < ahead;
}

/** What the owner sees of a grant (never a token). */
function viewOf(url: string, grant: Grant | null): AuthorizationView {
  const row = grant?.row;
  const status = usableFor(url, grant)
    ? 'connected'
    : row?.status === 'reconnect' || (grant?.secrets.serverUrl && grant.secrets.serverUrl !== url)
      ? 'reconnect'
      : 'notConnected';
  return {
    kind: 'oauth',
    status,
    reason: status === 'connected' ? null : (row?.reason ?? null),
    issuer: row?.issuer ?? null,
    scope: row?.scope ?? null,
    expiresAt: status === 'connected' ? (row?.expiresAt ?? null) : null,
    connectedAt: row?.connectedAt ?? null,
  };
}

/** Every secret value a grant holds (for scrubbing). */
const secretsOf = (s: GrantSecrets) =>
  [
    s.tokens?.access_token,
    s.tokens?.refresh_token,
    s.tokens?.id_token,
    s.client?.client_secret,
    s.pending?.verifier,
  ].filter((v): v is string => typeof v === 'string' && v.length >= 8);

export function createUpstreamAuthorization(
  options: UpstreamAuthorizationOptions,
): UpstreamAuthorization {
  const { upstream, url, settings, grants } = options;
  const scope = settings.scopes?.length ? settings.scopes.join(' ') : undefined;
  const client: ClientSettings = { upstream, settings, scope };
  let refreshing: Promise<void> | null = null;
  let checkedAt = 0;

  const read = async (fresh = false) => {
    const grant = await grants.get(fresh);
    if (grant) options.onSecrets(secretsOf(grant.secrets));
    return grant;
  };
  const write: GrantStore['put'] = async (secrets, facts) => {
    options.onSecrets(secretsOf(secrets));
    return grants.put(secrets, facts);
  };
  const usable = (grant: Grant | null) => usableFor(url, grant);

  async function markReconnect(reason: string, wanted?: string) {
    const grant = await grants.get(true);
    if (!grant) return;
    const { tokens, ...rest } = grant.secrets;
    // A step-up keeps what was granted and adds what is asked (the refresh grant cannot widen it).
    const wantedScope = wanted
      ? computeScopeUnion(rest.wantedScope, tokens?.scope, wanted)
      : rest.wantedScope;
    await write(
      { ...rest, ...(wantedScope ? { wantedScope } : {}) },
      { status: 'reconnect', reason },
    );
  }

  /** One refresh at a time; `ahead`: only if still expiring once the store is read again. */
  function refresh(ahead: boolean): Promise<void> {
    refreshing ??= (async () => {
      try {
        const grant = await read(true);
        const tokens = usable(grant);
        if (!tokens)
          throw new ReconnectRequired(upstream, grant?.row.reason ?? 'it is not connected');
        if (ahead && !expiring(tokens)) return; // another instance refreshed it
        if (!tokens.refresh_token)
          throw new ReconnectRequired(
            upstream,
            ahead
              ? 'its access token expired and its authorization server gave no refresh token'
              : 'it refused the access token and its authorization server gave no refresh token',
          );
        const work: GrantSecrets = { ...grant!.secrets };
        // Plain fetch: the upstream's configured headers are not for its authorization server.
        const result = await auth(grantProvider(client, 'background', work, {}), {
          serverUrl: url,
          ...(scope ? { scope } : {}),
        });
        if (result !== 'AUTHORIZED' || !work.tokens)
          throw new ReconnectRequired(upstream, 'its authorization ended and cannot be refreshed');
        await write(work, { status: 'connected', reason: null });
      } catch (error) {
        if (error instanceof ReconnectRequired) await markReconnect(error.reason);
        throw error;
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  const provider: AuthProvider = {
    async token() {
      const grant = await read();
      if (!usable(grant)) return undefined;
      if (expiring(usable(grant)) && usable(grant)!.refresh_token)
        await refresh(true).catch((error: unknown) => {
          // A failed refresh ahead of time is not yet a failure: the token may still be good.
          if (error instanceof ReconnectRequired) throw error;
        });
      return usable(await read())?.access_token;
    },
    async onUnauthorized() {
      await refresh(false);
    },
  };

  return {
    provider,
    refuse: markReconnect,
    async blocked() {
      const stale = Date.now() - checkedAt > RECHECK_MS;
      let grant = await read();
      if (!usable(grant) && stale) {
        checkedAt = Date.now();
        grant = await read(true);
      }
      if (usable(grant)) return null;
      if (grant && grant.secrets.serverUrl && grant.secrets.serverUrl !== url)
        return 'it was connected for another URL; connect it again';
      return grant?.row.reason ?? 'the owner has not connected it yet';
    },
    async view() {
      // Read afresh: another instance sharing the store may have connected, refreshed or lost it.
      return viewOf(url, await read(true).catch(() => null));
    },
    ...connectFlow({ client, url, headers: options.headers, read, write }),
  };
}
