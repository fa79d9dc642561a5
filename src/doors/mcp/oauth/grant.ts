/**
 * One upstream's OAuth grant as Airlock keeps it: a plain part the owner's
 * view may read (status, issuer, scope, expiry — never a token) and a sealed
 * part (client registration, tokens, discovery, the pending PKCE verifier),
 * stored in the store's records (`mcp.oauth`, keyed by upstream name) so
 * every instance sharing the store sees one grant. Reads are cached in
 * memory; every change is written through.
 */
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { Store } from '../../../kernel/index.js';
import type { Sealer } from './seal.js';

export const GRANTS = 'mcp.oauth';

/** `connected`: tokens are held; `reconnect`: they expired or were revoked, the owner must connect again. */
export type GrantStatus = 'connected' | 'reconnect';

/** What is sealed. */
export interface GrantSecrets {
  /** The upstream URL the grant was made for: a grant never follows a changed URL. */
  serverUrl: string;
  /** The redirect URL the client was registered with (a registration is for it only). */
  redirectUrl?: string;
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens & { obtainedAt: number };
  discovery?: OAuthDiscoveryState;
  /** Scope the upstream asked for beyond the grant (a 403 `insufficient_scope`): the next connect asks for it. */
  wantedScope?: string;
  /** An owner's connect waiting for its callback. */
  pending?: { state: string; verifier: string; redirectUrl: string; createdAt: number };
}

/** The stored row: the plain facts and the sealed secrets. */
export interface GrantRow {
  status: GrantStatus | null;
  reason: string | null;
  issuer: string | null;
  scope: string | null;
  /** When the access token expires (ms), if the server said. */
  expiresAt: number | null;
  connectedAt: number | null;
  sealed: string;
}

export interface Grant {
  row: Omit<GrantRow, 'sealed'>;
  secrets: GrantSecrets;
}

export interface GrantStore {
  /** The grant as last read or written here; `fresh` reads the store again. */
  get(fresh?: boolean): Promise<Grant | null>;
  /** Writes a change (the plain facts derived from the secrets unless given). */
  put(
    secrets: GrantSecrets,
    facts: Partial<Pick<GrantRow, 'status' | 'reason' | 'connectedAt'>>,
  ): Promise<Grant>;
}

const EMPTY_ROW: Omit<GrantRow, 'sealed'> = {
  status: null,
  reason: null,
  issuer: null,
  scope: null,
  expiresAt: null,
  connectedAt: null,
};

export function createGrantStore(options: {
  upstream: string;
  store: () => Store | null;
  sealer: Sealer;
}): GrantStore {
  const { upstream, sealer } = options;
  let cached: Grant | null | undefined;

  const storeOf = () => {
    const s = options.store();
    if (!s) throw new Error('the mcp door has not started yet; try again once the server is up');
    return s;
  };

  async function read(): Promise<Grant | null> {
    const record = await storeOf().read((tx) => tx.records.get<GrantRow>(GRANTS, upstream));
    if (!record) return null;
    const { sealed, ...row } = record.value;
    const plain = await sealer.open(sealed, upstream);
    if (plain === null)
      // The key file was replaced or lost: the tokens cannot be used.
      return {
        row: {
          ...row,
          status: 'reconnect',
          reason:
            'its stored tokens were sealed with another key (instances sharing a store need the same upstream-oauth.key in their data folders; copy it, or connect it again)',
        },
        secrets: { serverUrl: '' },
      };
    return { row: { ...EMPTY_ROW, ...row }, secrets: JSON.parse(plain) as GrantSecrets };
  }

  return {
    async get(fresh = false) {
      if (fresh || cached === undefined) cached = await read();
      return cached;
    },
    async put(secrets, facts) {
      const before = cached?.row ?? EMPTY_ROW;
      const tokens = secrets.tokens;
      const row: Omit<GrantRow, 'sealed'> = {
        status: facts.status !== undefined ? facts.status : before.status,
        reason: facts.reason !== undefined ? facts.reason : before.reason,
        issuer: tokens?.issuer ?? secrets.client?.issuer ?? before.issuer,
        scope: tokens?.scope ?? before.scope,
        expiresAt:
          tokens?.expires_in !== undefined ? tokens.obtainedAt + tokens.expires_in * 1000 : null,
        connectedAt: facts.connectedAt !== undefined ? facts.connectedAt : before.connectedAt,
      };
      const sealed = await sealer.seal(JSON.stringify(secrets), upstream);
      await storeOf().transaction((tx) => tx.records.put(GRANTS, upstream, { ...row, sealed }));
      cached = { row, secrets };
      return cached;
    },
  };
}
