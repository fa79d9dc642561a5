/**
 * The SDK's `OAuthClientProvider` over one upstream's grant (a working copy
 * the flow mutates; the caller stores it). `connect` is the owner's flow:
 * it may register, and keeps the state and PKCE verifier for the callback.
 * `background` is a refresh on an agent's behalf: it never registers or
 * starts an authorization — where the SDK would, it throws
 * `ReconnectRequired` (spec/gateway.md §1 "OAuth upstreams").
 */
import type { OAuthClientMetadata, OAuthClientProvider } from '@modelcontextprotocol/client';
import type { OAuthSettings } from '../config.js';
import { ReconnectRequired } from './errors.js';
import type { GrantSecrets } from './grant.js';

export type Mode = 'connect' | 'background';

/** Who the client is for one upstream: its name, its `oauth` config, the scope that config asks. */
export interface ClientSettings {
  upstream: string;
  settings: OAuthSettings;
  scope: string | undefined;
}

/** An SDK provider over `work` (mutated as the flow goes). */
export function grantProvider(
  client: ClientSettings,
  mode: Mode,
  work: GrantSecrets,
  extra: { state?: string; verifier?: string; onRedirect?: (url: URL) => void },
): OAuthClientProvider {
  const { upstream, settings, scope } = client;
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
      if (mode === 'background' && info.client_id !== (work.client?.client_id ?? settings.clientId))
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
