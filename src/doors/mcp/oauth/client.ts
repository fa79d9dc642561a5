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
import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  auth,
  computeScopeUnion,
  extractWWWAuthenticateParams,
  InsufficientScopeError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
  type AuthProvider,
  type OAuthClientMetadata,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../config.js';
import type { Grant, GrantSecrets, GrantStore } from './grant.js';

/** The owner has to connect the upstream (again); the reason speaks to a person. */
export class ReconnectRequired extends Error {
  override name = 'ReconnectRequired';
  constructor(
    readonly upstream: string,
    readonly reason: string,
  ) {
    super(`the upstream '${upstream}' needs the owner to reconnect it: ${reason}`);
  }
}

/** A connect that cannot go on (no such pending connect, refused by the server); the message speaks to the owner. */
export class ConnectRefused extends Error {
  override name = 'ConnectRefused';
}

/**
 * Whether `error` (from a request to the upstream) means it refused
 * Airlock's authorization: why, and the scope it asks for when it wants more
 * (a 403 `insufficient_scope`, which only the owner's reconnect can grant).
 */
export function authorizationFailure(error: unknown): { reason: string; scope?: string } | null {
  if (error instanceof ReconnectRequired) return { reason: error.reason };
  if (error instanceof InsufficientScopeError)
    return {
      reason: `it asks for more access${error.requiredScope ? ` (scope ${error.requiredScope})` : ''}`,
      ...(error.requiredScope ? { scope: error.requiredScope } : {}),
    };
  if (error instanceof UnauthorizedError) return { reason: 'it refused the token' };
  if (error instanceof SdkHttpError && error.code === SdkErrorCode.ClientHttpAuthentication)
    return { reason: 'it refused the token even after a refresh' };
  return null;
}

/** How long an owner's connect waits for its callback. */
export const PENDING_MS = 10 * 60_000;
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

export interface UpstreamAuthorization {
  /** For the upstream's transport: the bearer token, refreshed when needed. */
  readonly provider: AuthProvider;
  /** Why the upstream cannot be connected now (the owner must connect it), or null. */
  blocked(): Promise<string | null>;
  view(): Promise<AuthorizationView>;
  /** Starts the owner's connect; the URL to send the owner's browser to. */
  begin(redirectUrl: string): Promise<URL>;
  /** Whether `state` is this upstream's pending connect. */
  pending(state: string): Promise<boolean>;
  /**
   * Marks the grant `reconnect` (the upstream refused its token even after a
   * refresh, or asks for more scope: the owner's reconnect then asks for it too).
   */
  refuse(reason: string, scope?: string): Promise<void>;
  /** Completes the owner's connect with the callback's parameters. */
  finish(callback: { code: string; state: string; iss?: string | undefined }): Promise<void>;
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

type Mode = 'connect' | 'background';

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export function createUpstreamAuthorization(
  options: UpstreamAuthorizationOptions,
): UpstreamAuthorization {
  const { upstream, url, settings, grants } = options;
  const scope = settings.scopes?.length ? settings.scopes.join(' ') : undefined;
  let refreshing: Promise<void> | null = null;
  let checkedAt = 0;

  const secretsOf = (s: GrantSecrets) =>
    [
      s.tokens?.access_token,
      s.tokens?.refresh_token,
      s.tokens?.id_token,
      s.client?.client_secret,
      s.pending?.verifier,
    ].filter((v): v is string => typeof v === 'string' && v.length >= 8);

  const noticed = (grant: Grant | null) => {
    if (grant) options.onSecrets(secretsOf(grant.secrets));
    return grant;
  };
  const read = async (fresh = false) => noticed(await grants.get(fresh));
  const write: GrantStore['put'] = async (secrets, facts) => {
    options.onSecrets(secretsOf(secrets));
    return grants.put(secrets, facts);
  };

  const usable = (grant: Grant | null) =>
    grant?.row.status === 'connected' && grant.secrets.serverUrl === url && grant.secrets.tokens
      ? grant.secrets.tokens
      : null;

  /** An SDK provider over `work` (mutated as the flow goes). */
  function clientProvider(
    mode: Mode,
    work: GrantSecrets,
    extra: { state?: string; verifier?: string; onRedirect?: (url: URL) => void },
  ): OAuthClientProvider {
    const redirect = work.pending?.redirectUrl ?? work.redirectUrl;
    const metadata: OAuthClientMetadata = {
      client_name: 'Airlock',
      redirect_uris: redirect ? [redirect] : [],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(scope ? { scope } : {}),
    };
    const refuse = (reason: string): never => {
      throw new ReconnectRequired(upstream, reason);
    };
    return {
      get redirectUrl() {
        return redirect;
      },
      ...(settings.clientMetadataUrl ? { clientMetadataUrl: settings.clientMetadataUrl } : {}),
      get clientMetadata() {
        return metadata;
      },
      ...(extra.state ? { state: () => extra.state! } : {}),
      // A pre-registered client (config) when nothing was registered or named by CIMD.
      clientInformation: () =>
        work.client ??
        (settings.clientId
          ? {
              client_id: settings.clientId,
              ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
            }
          : undefined),
      saveClientInformation(info) {
        // Registering is the owner's act (a connect), never a side effect of an agent's call.
        if (
          mode === 'background' &&
          info.client_id !== (work.client?.client_id ?? settings.clientId)
        )
          refuse('its client registration is no longer accepted');
        work.client = info;
      },
      tokens: () => work.tokens,
      saveTokens(tokens) {
        work.tokens = { ...tokens, obtainedAt: Date.now() };
      },
      redirectToAuthorization(authorizationUrl) {
        if (mode === 'background' || !extra.onRedirect)
          refuse('its authorization ended and cannot be refreshed');
        extra.onRedirect!(authorizationUrl);
      },
      saveCodeVerifier(verifier) {
        if (mode === 'background') refuse('its authorization ended and cannot be refreshed');
        work.pending = {
          state: extra.state ?? '',
          verifier,
          redirectUrl: redirect ?? '',
          createdAt: Date.now(),
        };
      },
      codeVerifier: () => extra.verifier ?? work.pending?.verifier ?? '',
      invalidateCredentials(what) {
        if (what === 'all' || what === 'client') delete work.client;
        if (what === 'all' || what === 'tokens') delete work.tokens;
        if (what === 'all' || what === 'verifier') delete work.pending;
        if (what === 'all' || what === 'discovery') delete work.discovery;
      },
      saveDiscoveryState(state) {
        work.discovery = state;
      },
      discoveryState: () => work.discovery,
    };
  }

  /** One unauthenticated JSON-RPC request to the upstream (its configured headers, no token). */
  const probe = (method: string, params: Record<string, unknown>) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method, params }),
    })
      .then(async (res) => {
        await res.body?.cancel().catch(() => undefined);
        return res;
      })
      .catch(() => null);

  /**
   * The upstream's own 401 (to `tools/list`, else `initialize`, without a
   * token): where its protected-resource metadata is and which scope it asks
   * for, when its `WWW-Authenticate` says (RFC 9728 §5.1); nothing otherwise.
   */
  async function challenge(): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    let res = await probe('tools/list', {});
    if (res?.status !== 401)
      res = await probe('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'airlock', version: '1' },
      });
    if (res?.status !== 401) return {};
    const { resourceMetadataUrl, scope: asked } = extractWWWAuthenticateParams(res);
    return {
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
      ...(asked ? { scope: asked } : {}),
    };
  }

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

  /** In the last minute of its life (or the last half, for a token that lives less than two). */
  const expiring = (grant: Grant | null) => {
    const tokens = usable(grant);
    if (!tokens?.expires_in) return false;
    const lifetime = tokens.expires_in * 1000;
    const ahead = Math.min(REFRESH_AHEAD_MS, lifetime / 2);
    return tokens.obtainedAt + lifetime - Date.now() < ahead;
  };

  /** One refresh at a time; `ahead`: only if still expiring once the store is read again. */
  function refresh(ahead: boolean): Promise<void> {
    refreshing ??= (async () => {
      try {
        const grant = await read(true);
        const tokens = usable(grant);
        if (!tokens)
          throw new ReconnectRequired(upstream, grant?.row.reason ?? 'it is not connected');
        if (ahead && !expiring(grant)) return; // another instance refreshed it
        if (!tokens.refresh_token)
          throw new ReconnectRequired(
            upstream,
            ahead
              ? 'its access token expired and its authorization server gave no refresh token'
              : 'it refused the access token and its authorization server gave no refresh token',
          );
        const work: GrantSecrets = { ...grant!.secrets };
        // Plain fetch: the upstream's configured headers are not for its authorization server.
        const result = await auth(clientProvider('background', work, {}), {
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
      if (expiring(grant) && usable(grant)!.refresh_token)
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
      const grant = await read(true).catch(() => null);
      const row = grant?.row;
      const status = usable(grant ?? null)
        ? 'connected'
        : row?.status === 'reconnect' ||
            (grant?.secrets.serverUrl && grant.secrets.serverUrl !== url)
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
    },
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
      const found = await challenge();
      // What the configuration or the upstream's 401 asks, and what it asked for since (step-up).
      const asked = computeScopeUnion(scope ?? found.scope, work.wantedScope);
      const result = await auth(
        clientProvider('connect', work, { state, onRedirect: (u) => (target = u) }),
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
      const result = await auth(clientProvider('connect', work, { verifier: p.verifier }), {
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
