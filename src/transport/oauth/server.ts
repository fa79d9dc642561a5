/**
 * Airlock as an OAuth resource server and authorization server for remote
 * MCP clients (authority.md §7). Connecting a client is the owner's
 * consent, and the consent makes (or reuses) an agent: the client's tokens
 * are that agent's, so every rule, ask, grant, cap and audit line applies
 * to it unchanged, and revoking the agent ends them at once on every
 * instance (the principals epoch).
 *
 * - `/mcp` and `/mcp/<door>` without a credential answer 401 with
 *   `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728);
 * - `/.well-known/oauth-protected-resource[/mcp[/<door>]]` names the
 *   resource and this authorization server; `/.well-known/oauth-authorization-server`
 *   (RFC 8414) and `/.well-known/openid-configuration` describe it;
 * - the library's endpoints live under `/oauth/`; the owner's consent page
 *   is the web UI's `/oauth/consent/<id>`, deciding through owner routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import { failure, type Failure } from '../../kernel/errors.js';
import { AgentName } from '../../kernel/authority/principals.js';
import { agentKey } from '../../kernel/connection.js';
import { mountOf } from '../../kernel/kernel.js';
import type { Logger } from '../../kernel/logger.js';
import type { ServingKernel } from '../surface.js';
import { isLoopbackHost } from '../http/guards.js';
import { liveTokens } from './adapter.js';
import {
  createProvider,
  MCP_SCOPE,
  OAUTH_PREFIX,
  CONSENT_PATH,
  type OAuthSettings,
} from './provider.js';

export { CONSENT_PATH, type OAuthSettings };

const PRM_PATH = '/.well-known/oauth-protected-resource';
/** Agents made by consent: name → the client that made it. */
export const OAUTH_AGENTS = 'oauth.agents';

export interface OAuthAgentRecord {
  clientId: string;
  clientName: string;
  connectedAt: number;
  grants: string[];
}

/** What the owner judges on the consent page. */
export interface ConsentView {
  id: string;
  client: {
    id: string;
    name: string;
    /** Hosts only: the client's own page, its logo, and where the browser goes back to. */
    uriHost: string | null;
    logoHost: string | null;
    redirectHost: string;
    /** How the client proved its name: a metadata document at its ID, or a registration. */
    identifiedBy: 'metadata document' | 'registration';
  };
  resource: string;
  /** The doors the connection may reach (mounts). */
  doors: string[];
  /** Active agents the owner may let this client act as instead of a new one. */
  agents: string[];
  suggestedAgent: string;
  expiresAt: number;
}

export interface OAuthServer {
  /** Starts the authorization server at `issuerBase` (once the address is known). */
  start(issuerBase: string, options: { proxy: boolean }): Promise<void>;
  /** True for a path the authorization server answers. */
  owns(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The protected-resource metadata at this path, or null when the path names none. */
  protectedResource(path: string): Record<string, unknown> | null;
  /** The `WWW-Authenticate` of a 401 on this MCP path. */
  challenge(mcpPath: string, error?: string): string;
  /**
   * The agent an access token acts as on this MCP path; a refusal saying
   * why (another resource, revoked agent); null for a token this server did
   * not issue (or before start).
   */
  authenticate(
    token: string,
    mcpPath: string,
  ): Promise<{ agent: string; key: string } | { refused: string } | null>;
  consent(id: string): Promise<ConsentView | Failure>;
  decide(
    id: string,
    decision: { approve: boolean; agent?: string; readOnly?: boolean },
  ): Promise<{ redirectTo: string } | Failure>;
  /** OAuth agents: name → its client, and how many of its tokens are still good. */
  agents(): Promise<Record<string, OAuthAgentRecord & { tokens: number }>>;
}

export interface OAuthServerOptions {
  kernel: ServingKernel;
  logger: Logger;
  settings?: OAuthSettings;
}

const hostOf = (url: unknown): string | null => {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
};

/** An agent name from a client's name: `Claude Desktop` → `claude-desktop`. */
export function suggestAgentName(clientName: string): string {
  const slug = clientName
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return AgentName.safeParse(slug).success ? slug : 'oauth-client';
}

interface State {
  kernel: ServingKernel;
  provider: Provider | null;
  issuer: string;
  mounts: string[];
}

const resourcesOf = (issuer: string, mounts: readonly string[]) => [
  `${issuer}/mcp`,
  ...mounts.map((m) => `${issuer}/mcp/${m}`),
];

const GONE =
  'This connection request is no longer waiting (it was answered, or 15 minutes passed); start the connection again from the client.';

export function createOAuthServer(o: OAuthServerOptions): OAuthServer {
  const { kernel, logger } = o;
  const mounts = kernel.doors().map(mountOf);
  let provider: Provider | null = null;
  let issuer = '';
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;

  /** `/mcp` → `<issuer>/mcp`, `/mcp/notes` → `<issuer>/mcp/notes`. */
  const resourceOf = (mcpPath: string) => {
    const parts = mcpPath.split('/').filter(Boolean).slice(0, 2);
    return `${issuer}/${parts.join('/')}`;
  };
  const resources = () => resourcesOf(issuer, mounts);
  const state = (): State => ({ kernel, provider, issuer, mounts });

  const refused = refusalRecorder(kernel, logger);

  let started: { proxy: boolean } | null = null;
  const ready = onDemand(async () => {
    if (!started) throw new Error('OAuth has not started');
    const made = await createProvider({
      store: kernel.store,
      issuer,
      resources: resources(),
      settings: o.settings ?? {},
      proxy: started.proxy,
      loopback: isLoopbackHost(new URL(issuer).hostname),
      onRefused: refused,
    });
    provider = made;
    handler = made.callback() as typeof handler;
    return made;
  });

  return {
    start(issuerBase, options) {
      issuer = new URL(issuerBase).origin;
      started = { proxy: options.proxy };
      return Promise.resolve();
    },

    owns: (path) =>
      (path.startsWith(OAUTH_PREFIX) && !path.startsWith(CONSENT_PATH)) ||
      path === '/.well-known/openid-configuration' ||
      path === '/.well-known/oauth-authorization-server',

    async handle(req, res) {
      const unavailable = await ready().then(
        () => null,
        (error: unknown) => error as Error,
      );
      if (unavailable) logger.warn({ err: unavailable }, 'oauth could not start');
      if (unavailable || !handler) {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end(
          JSON.stringify({
            error: 'temporarily_unavailable',
            error_description: 'OAuth is starting.',
          }),
        );
        return;
      }
      handler(libraryRequest(req), res);
    },

    protectedResource(path) {
      if (!issuer || !(path === PRM_PATH || path.startsWith(`${PRM_PATH}/`))) return null;
      const rest = path.slice(PRM_PATH.length) || '/mcp';
      const resource = `${issuer}${rest}`;
      if (!resources().includes(resource)) return null;
      return {
        resource,
        authorization_servers: [issuer],
        scopes_supported: [MCP_SCOPE],
        bearer_methods_supported: ['header'],
        resource_name: rest === '/mcp' ? 'Airlock' : `Airlock (${rest.slice('/mcp/'.length)})`,
      };
    },

    challenge(mcpPath, error) {
      const parts = mcpPath.split('/').filter(Boolean).slice(0, 2);
      const metadata = `${issuer}${PRM_PATH}/${parts.join('/')}`;
      return `Bearer resource_metadata="${metadata}", scope="${MCP_SCOPE}"${error ? `, error="${error}"` : ''}`;
    },

    async authenticate(token, mcpPath) {
      if (!started || token.length > 200) return null;
      const made = await ready().catch(() => null); // not started: it knows no token
      const at = await made?.AccessToken.find(token);
      if (!at) return null;
      const audience = [at.aud].flat().filter(Boolean) as string[];
      const resource = resourceOf(mcpPath);
      if (!audience.includes(resource)) {
        refused(
          'resource',
          at.clientId ?? null,
          `token for ${audience.join(' ')} used on ${resource}`,
        );
        return {
          refused: `This access token is for ${audience.join(', ')}, not ${resource}; connect the client to ${resource} to get a token for it.`,
        };
      }
      const agent = at.accountId ? await kernel.principals.agentByKey(at.accountId) : null;
      if (!agent)
        return {
          refused:
            'The agent this access token acted as was revoked by the owner; connect the client again and ask the owner to approve it.',
        };
      return agent;
    },

    consent: async (id) => {
      await ready().catch(() => undefined);
      return consentView(state(), id);
    },

    decide: async (id, decision) => {
      await ready().catch(() => undefined);
      return decideConsent(state(), id, decision);
    },

    async agents() {
      const rows = await kernel.store.read((tx) => tx.records.list<OAuthAgentRecord>(OAUTH_AGENTS));
      const counted = await Promise.all(
        rows.map(async (r) => [
          r.key,
          { ...r.value, tokens: await liveTokens(kernel.store, r.value.grants) },
        ]),
      );
      return Object.fromEntries(counted);
    },
  };
}

/** The request as the library reads it. */
function libraryRequest(req: IncomingMessage): IncomingMessage {
  const url = new URL(req.url ?? '/', 'http://x');
  // RFC 8414's metadata is the library's discovery document.
  if (url.pathname === '/.well-known/oauth-authorization-server')
    req.url = '/.well-known/openid-configuration';
  // A request that names no scope asks for the one there is (clients may omit it).
  if (url.pathname === '/oauth/authorize' && !url.searchParams.get('scope')) {
    url.searchParams.set('scope', MCP_SCOPE);
    req.url = url.pathname + url.search;
  }
  return req;
}

/** A refused OAuth request: logged and in the audit. */
function refusalRecorder(kernel: ServingKernel, logger: Logger) {
  return (what: string, clientId: string | null, error: string) => {
    logger.warn({ what, clientId, error }, 'oauth request refused');
    void kernel.audit
      .record({
        connection: 'oauth',
        door: 'airlock',
        tool: `oauth.${what}`,
        args: { clientId },
        provenance: null,
        result: `refused: ${error}`.slice(0, 500),
        durationMs: 0,
      })
      .catch(() => undefined);
  };
}

/**
 * `make` run once, when first needed; a failure is not kept (the next call
 * tries again). The OAuth provider (oidc-provider and its keys) is made with
 * the first OAuth request, not at start-up: most starts never see one.
 */
function onDemand<T>(make: () => Promise<T>): () => Promise<T> {
  let making: Promise<T> | null = null;
  return () =>
    (making ??= make().catch((error: unknown) => {
      making = null;
      throw error;
    }));
}

/** The waiting request as the owner judges it. */
async function consentView(st: State, id: string): Promise<ConsentView | Failure> {
  const { provider, issuer, kernel, mounts } = st;
  const resources = resourcesOf(issuer, mounts);
  if (!provider) return failure('unavailable', 'OAuth is starting; try again in a moment.');
  const interaction = await provider.Interaction.find(id);
  // Answered already: the browser is on its way back to the client.
  if (!interaction || interaction.result) return failure('notFound', GONE);
  const params = interaction.params as Record<string, unknown>;
  const client = await provider.Client.find(String(params.client_id));
  if (!client) return failure('notFound', GONE);
  const resource = typeof params.resource === 'string' ? params.resource : resources[0]!;
  const door = resource.slice(`${issuer}/mcp/`.length);
  const name = client.clientName ?? client.clientId;
  const agents = (await kernel.principals.listAgents())
    .filter((a) => a.revokedAt === null)
    .map((a) => a.name);
  return {
    id,
    client: {
      id: client.clientId,
      name,
      uriHost: hostOf(client.clientUri),
      logoHost: hostOf(client.logoUri),
      redirectHost: hostOf(params.redirect_uri) ?? '',
      identifiedBy: /^https?:\/\//.test(client.clientId) ? 'metadata document' : 'registration',
    },
    resource,
    doors: resource === `${issuer}/mcp` ? mounts : [door],
    agents,
    suggestedAgent: suggestAgentName(name),
    expiresAt: (interaction.exp ?? 0) * 1000,
  };
}

/** The owner's decision on a waiting request: the agent and its grant, or the client's `access_denied`. */
async function decideConsent(
  st: State,
  id: string,
  decision: { approve: boolean; agent?: string; readOnly?: boolean },
): Promise<{ redirectTo: string } | Failure> {
  const { kernel } = st;
  const provider = st.provider;
  const shown = await consentView(st, id);
  if ('ok' in shown) return shown;
  const interaction = (await provider!.Interaction.find(id))!;
  const audit = {
    client: shown.client.id,
    clientName: shown.client.name,
    resource: shown.resource,
  };
  if (!decision.approve) {
    interaction.result = {
      error: 'access_denied',
      error_description: 'The owner declined this connection.',
    };
    await interaction.save(Math.max(1, (interaction.exp ?? 0) - Math.floor(Date.now() / 1000)));
    await kernel.audit.ownerAction('oauth.consent', 'airlock', audit, 'denied');
    return { redirectTo: interaction.returnTo };
  }
  const name = decision.agent ?? shown.suggestedAgent;
  const parsed = AgentName.safeParse(name);
  if (!parsed.success)
    return failure('malformedRequest', `Agent name '${name}': ${parsed.error.issues[0]?.message}.`);
  const key = await agentFor(kernel, name);
  if ('ok' in key) return key;
  // Read-only before anything is granted: a client never holds a token its rules do not yet bind.
  if (decision.readOnly) {
    const bound = await readOnlyRules(kernel, name, shown.client.name);
    if (bound) return bound;
  }
  const grant = new provider!.Grant({ accountId: key.key, clientId: shown.client.id });
  const asked = String((interaction.params as { scope?: unknown }).scope ?? '').split(' ');
  // `mcp` is both a scope of this server and of the resource (the library checks both).
  const oidc = asked.filter((s) => s === 'openid' || s === 'offline_access' || s === MCP_SCOPE);
  if (oidc.length) grant.addOIDCScope(oidc.join(' '));
  grant.addResourceScope(shown.resource, MCP_SCOPE);
  const grantId = await grant.save();
  interaction.result = { login: { accountId: key.key }, consent: { grantId } };
  await interaction.save(Math.max(1, (interaction.exp ?? 0) - Math.floor(Date.now() / 1000)));
  await remember(kernel, name, shown, grantId);
  await kernel.audit.ownerAction('oauth.consent', 'airlock', {
    ...audit,
    agent: name,
    readOnly: !!decision.readOnly,
  });
  return { redirectTo: interaction.returnTo };
}

/** The active agent of that name, made now when there is none (its static token is never shown). */
async function agentFor(kernel: ServingKernel, name: string): Promise<{ key: string } | Failure> {
  const find = async () =>
    (await kernel.principals.listAgents()).find((a) => a.name === name && a.revokedAt === null);
  let agent = await find();
  if (!agent) {
    const added = await kernel.principals.addAgent(name);
    if ('ok' in added) return added;
    agent = await find();
  }
  if (!agent) return failure('notFound', `The agent '${name}' could not be made; try again.`);
  return { key: agentKey(agent.name, agent.id) };
}

/** "Read-only" on the consent page: the owner's rules deny this agent every write. */
async function readOnlyRules(
  kernel: ServingKernel,
  agent: string,
  client: string,
): Promise<Failure | null> {
  // First among the owner's rules (the config file's stay ahead of them).
  const first = (await kernel.policy.view()).rules.filter((r) => r.source === 'config').length + 1;
  for (const effect of ['destructive', 'write'] as const) {
    const added = await kernel.policy.add(
      {
        agent,
        effect,
        decision: 'deny',
        reason: `${client} was connected read-only`,
        origin: `oauth consent (${client})`.slice(0, 200),
      },
      first,
      // Kept even where no mounted door has such a tool yet: it binds the doors mounted later.
      { force: true },
    );
    if ('ok' in added)
      return failure(
        added.code,
        `The agent could not be made read-only (${added.message}); nothing was granted.`,
      );
  }
  return null;
}

async function remember(kernel: ServingKernel, agent: string, shown: ConsentView, grantId: string) {
  await kernel.store.transaction(async (tx) => {
    const found = await tx.records.get<OAuthAgentRecord>(OAUTH_AGENTS, agent);
    const grants = [...(found?.value.grants ?? []), grantId].slice(-20);
    await tx.records.put(OAUTH_AGENTS, agent, {
      clientId: shown.client.id,
      clientName: shown.client.name,
      connectedAt: Date.now(),
      grants,
    } satisfies OAuthAgentRecord);
  });
}
