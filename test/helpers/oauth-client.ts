/**
 * An OAuth-capable MCP client for tests against Airlock's authorization
 * server (authority.md §7): the official SDK v2 client with an in-memory
 * `OAuthClientProvider` naming itself by a client ID metadata document
 * (CIMD) this helper serves on loopback, and a "browser" that follows the
 * authorization redirects with a cookie jar until Airlock's consent page,
 * where the owner decides over REST (the page's own route), then on to the
 * client's redirect URI.
 */
import { createServer, type Server } from 'node:http';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientProvider,
  type OAuthClientInformationMixed,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import { listenLoopback } from './servers.js';

export interface CimdHost {
  /** The client ID: the URL of its metadata document. */
  clientId: string;
  redirectUri: string;
  /** What the document says (change it to serve another). */
  document: Record<string, unknown>;
  close(): Promise<void>;
}

/** Serves a client's metadata document at `http://localhost:PORT/client.json`. */
export async function cimdHost(name = 'Test Client'): Promise<CimdHost> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/client.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(host.document));
    } else if (req.url?.startsWith('/callback')) {
      // The client's own page the browser lands on with the answer.
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>back</title>');
    } else res.writeHead(404).end();
  });
  const port = await listenLoopback(server);
  const clientId = `http://localhost:${port}/client.json`;
  const redirectUri = `http://localhost:${port}/callback`;
  const document: Record<string, unknown> = {
    client_id: clientId,
    client_name: name,
    client_uri: `http://localhost:${port}/`,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  const host: CimdHost = {
    clientId,
    redirectUri,
    document,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return host;
}

/** The client's side of the flow, in memory. */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** The authorization URL the SDK asked the user's browser to open. */
  authorizationUrl: URL | undefined;
  /**
   * `cimd`: the client ID is its metadata document's URL. The SDK takes only
   * `https://` URLs as `clientMetadataUrl`, so a loopback document's URL is
   * given as the client's known ID instead (the SDK then uses it as is).
   */
  constructor(
    readonly cimd: CimdHost,
    readonly mode: 'cimd' | 'register' = 'cimd',
  ) {
    if (mode === 'cimd') this.info = { client_id: cimd.clientId };
  }
  get redirectUrl() {
    return this.cimd.redirectUri;
  }
  get clientMetadata() {
    return {
      client_name: String(this.cimd.document.client_name),
      redirect_uris: [this.cimd.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation = () => this.info;
  saveClientInformation = (info: OAuthClientInformationMixed) => {
    this.info = info;
  };
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => {
    this.saved = tokens;
  };
  redirectToAuthorization = (url: URL) => {
    this.authorizationUrl = url;
  };
  saveCodeVerifier = (v: string) => {
    this.verifier = v;
  };
  codeVerifier = () => this.verifier;
}

/** A browser with cookies: GETs following redirects by hand. */
export class Browser {
  private cookies = new Map<string, string>();
  async get(url: string): Promise<Response> {
    const res = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
  /** Follows redirects from `url` until one leaves `origin` or lands on `stopAt`; the last URL. */
  async follow(url: string, stop: (u: URL) => boolean): Promise<URL> {
    let current = new URL(url);
    for (let hops = 0; hops < 10; hops++) {
      if (stop(current)) return current;
      const res = await this.get(current.href);
      const location = res.headers.get('location');
      if (!location)
        throw new Error(
          `${current.pathname} answered ${res.status}: ${(await res.text()).slice(0, 500)}`,
        );
      current = new URL(location, current);
    }
    throw new Error('too many redirects');
  }
}

export interface OwnerDecision {
  decision: 'approve' | 'deny';
  agent?: string;
  readOnly?: boolean;
}

/** Decides a waiting connection as the owner (owner token), as the consent page does. */
export async function decideConsent(
  base: string,
  ownerToken: string,
  id: string,
  body: OwnerDecision,
): Promise<Response> {
  return fetch(`${base}/api/v1/oauth/requests/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ownerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/**
 * The whole authorization: the browser opens the URL, reaches the consent
 * page, the owner decides, the browser goes on to the redirect URI. The
 * callback's query (code or error).
 */
export async function authorize(
  base: string,
  ownerToken: string,
  authorizationUrl: URL,
  redirectUri: string,
  decision: OwnerDecision,
): Promise<URLSearchParams> {
  const browser = new Browser();
  const consent = await browser.follow(authorizationUrl.href, (u) =>
    u.pathname.startsWith('/oauth/consent/'),
  );
  const id = consent.pathname.slice('/oauth/consent/'.length);
  const decided = await decideConsent(base, ownerToken, id, decision);
  if (decided.status !== 200) throw new Error(`decide: ${decided.status} ${await decided.text()}`);
  const { redirectTo } = (await decided.json()) as { redirectTo: string };
  const back = await browser.follow(new URL(redirectTo, base).href, (u) =>
    u.href.startsWith(redirectUri),
  );
  return back.searchParams;
}

/** Connects an SDK client with the provider's tokens, or throws `UnauthorizedError` when it has none. */
export async function connectWithOAuth(
  url: string,
  provider: OAuthClientProvider,
): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
}

/** From nothing: the 401, discovery, CIMD, consent, the code exchange, then a connected client. */
export async function connectFromNothing(
  url: string,
  base: string,
  ownerToken: string,
  provider: MemoryProvider,
  decision: OwnerDecision = { decision: 'approve' },
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const first = new Client({ name: 'oauth-test', version: '1.0.0' });
  const error = await first.connect(transport).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof UnauthorizedError)) throw error ?? new Error('connected without OAuth');
  const callback = await authorize(
    base,
    ownerToken,
    provider.authorizationUrl!,
    provider.redirectUrl,
    decision,
  );
  if (!callback.get('code')) throw new Error(`no code: ${callback.toString()}`);
  await transport.finishAuth(callback);
  return connectWithOAuth(url, provider);
}
