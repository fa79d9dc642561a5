/**
 * Airlock's authorization server: `oidc-provider` configured for the MCP
 * authorization specification (authority.md §7) — authorization code with
 * PKCE (S256) only, resource indicators bound to the MCP endpoints, opaque
 * access tokens kept in the store, refresh tokens rotated on every use (a
 * reused one ends its whole grant), clients identified by a metadata
 * document (CIMD) or, when the owner turns it on, by dynamic registration.
 * Every authorization needs the owner's consent on Airlock's own page: no
 * grant is ever reused from the library's session cookie.
 */
import type { JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import type Provider from 'oidc-provider';
import type * as OidcProvider from 'oidc-provider';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { Store } from '../../kernel/store.js';
import { storeAdapter } from './adapter.js';
import { loopbackClients } from './loopback-client.js';

/** The one scope: acting as the agent the owner's consent made. */
export const MCP_SCOPE = 'mcp';
/** Where the library's endpoints live (all under one prefix the HTTP app hands over). */
export const OAUTH_PREFIX = '/oauth/';
/** The owner's consent page (a page of the web UI). */
export const CONSENT_PATH = '/oauth/consent/';

export interface OAuthSettings {
  /** Clients may register themselves (RFC 7591). Default false: CIMD only. */
  dynamicRegistration?: boolean;
  /** Access token lifetime in minutes (default 60). */
  accessTokenMinutes?: number;
}

export interface ProviderOptions {
  store: Store;
  /** The issuer: the origin the owner and clients reach (e.g. `https://airlock.example.com`). */
  issuer: string;
  /** The protected resources: `<issuer>/mcp` and `<issuer>/mcp/<door>`. */
  resources: readonly string[];
  settings: OAuthSettings;
  /** Behind a proxy: trust `X-Forwarded-Proto`/`-Host`. */
  proxy: boolean;
  /** A loopback deployment: local clients' `http://localhost…` metadata documents are fetched. */
  loopback: boolean;
  /** A refusal worth the audit (what was refused, for which client, why). */
  onRefused(what: string, clientId: string | null, error: string): void;
}

const KEYS = 'oauth.keys';

/** The signing key and the cookie keys, made once per store and shared by its instances. */
async function keysOf(store: Store): Promise<{ jwk: JWK; cookies: string[] }> {
  const existing = await store.read((tx) =>
    tx.records.get<{ jwk: JWK; cookies: string[] }>(KEYS, 'v1'),
  );
  if (existing) return existing.value;
  // jose is loaded with the provider (first OAuth request), not at start-up.
  const { generateKeyPair, exportJWK } = await import('jose');
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const made = {
    jwk: {
      ...(await exportJWK(privateKey)),
      use: 'sig',
      alg: 'RS256',
      kid: randomBytes(8).toString('hex'),
    },
    cookies: [randomBytes(32).toString('base64url')],
  };
  return store.transaction(async (tx) => {
    const raced = await tx.records.get<{ jwk: JWK; cookies: string[] }>(KEYS, 'v1');
    if (raced) return raced.value;
    await tx.records.put(KEYS, 'v1', made);
    return made;
  });
}

const clientIdOf = (ctx: KoaContextWithOIDC): string | null =>
  ctx.oidc?.client?.clientId ??
  (typeof ctx.oidc?.params?.client_id === 'string' ? ctx.oidc.params.client_id : null);

/**
 * The library, loaded when OAuth starts. oidc-provider 9 names Node 22 as its
 * runtime and says so on stderr at import; Airlock runs it on Node 20 (its
 * own tests and the conformance authorization scenarios pass there), so
 * that one line is not printed into `airlock`'s output.
 */
async function loadLibrary(): Promise<typeof OidcProvider> {
  /* eslint-disable no-console -- only this one line of the library's is held back */
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('Unsupported runtime')) warn(...args);
  };
  try {
    return await import('oidc-provider');
  } finally {
    console.warn = warn;
  }
  /* eslint-enable no-console */
}

export async function createProvider(o: ProviderOptions): Promise<Provider> {
  const { default: Provider, errors } = await loadLibrary();
  const keys = await keysOf(o.store);
  const resources = new Set(o.resources);
  const accessTtl = Math.round((o.settings.accessTokenMinutes ?? 60) * 60);
  const configuration: Configuration = {
    adapter: storeAdapter({
      store: o.store,
      loopbackClient: loopbackClients(
        () => o.loopback,
        (id, why) => o.onRefused('client', id, why),
      ),
    }) as unknown as Configuration['adapter'],
    clients: [],
    jwks: { keys: [keys.jwk as never] },
    cookies: { keys: keys.cookies },
    scopes: ['openid', 'offline_access', MCP_SCOPE],
    claims: { openid: ['sub'] },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      registration: '/oauth/register',
      revocation: '/oauth/revoke',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/logout',
      introspection: '/oauth/introspect',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: o.settings.dynamicRegistration === true },
      revocation: { enabled: true },
      userinfo: { enabled: false },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02' as never,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.resources[0]!,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!resources.has(resource))
            throw new errors.InvalidTarget(
              `${resource} is not an MCP endpoint of this server; use ${o.resources[0]} or ${o.resources[0]}/<door>`,
            );
          return {
            scope: MCP_SCOPE,
            audience: resource,
            accessTokenTTL: accessTtl,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    pkce: { required: () => true },
    ttl: {
      AccessToken: accessTtl,
      AuthorizationCode: 60,
      Grant: 90 * 24 * 3600,
      Interaction: 15 * 60,
      RefreshToken: 30 * 24 * 3600,
      Session: 15 * 60,
      IdToken: 3600,
    },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Only the grant the owner's consent just made; never one remembered by the library's cookie.
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    interactions: { url: (_ctx, interaction) => `${CONSENT_PATH}${interaction.uid}` },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    renderError: async (ctx, out) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = errorPage(String(out.error), String(out.error_description ?? ''));
    },
  };
  const provider = new Provider(o.issuer, configuration);
  provider.proxy = o.proxy;
  const on = provider.on.bind(provider) as (
    event: string,
    listener: (
      ctx: KoaContextWithOIDC,
      error: { error?: string; error_description?: string },
    ) => void,
  ) => void;
  for (const [event, what] of [
    ['authorization.error', 'authorization'],
    ['grant.error', 'token'],
    ['registration_create.error', 'registration'],
    ['revocation.error', 'revocation'],
    ['server_error', 'server'],
  ] as const)
    on(event, (ctx, error) =>
      o.onRefused(
        what,
        clientIdOf(ctx),
        `${error.error ?? 'error'}: ${error.error_description ?? ''}`,
      ),
    );
  return provider;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What a person sees when an authorization request cannot go on (no redirect is safe). */
function errorPage(error: string, description: string): string {
  return `<!doctype html><meta charset="utf-8"><title>Airlock: connection refused</title>
<main style="font-family:system-ui;max-width:40em;margin:3em auto">
<h1>This connection cannot go on</h1>
<p>${escapeHtml(description || error)}</p>
<p><small>${escapeHtml(error)}</small></p>
<p>Start the connection again from your MCP client. If it keeps failing, the client's settings may be wrong.</p>
</main>`;
}
