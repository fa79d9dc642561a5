/**
 * The two kinds of principal (spec/authority.md §1): the owner, who runs
 * Airlock and decides, and the agents, MCP clients each with a name and a
 * token of its own. Neither can act as the other: a token is looked up by
 * its SHA-256 and answers exactly one principal.
 *
 * Tokens are random (32 bytes, base64url) and stored hashed; an agent's is
 * shown once, when it is made. The owner's hash is in the store so every
 * instance on one store knows it; the token itself lives in the owner's
 * `<data>/owner.token`. Changes are published (`agentsChanged`), so a
 * revocation takes effect at once on every instance sharing the bus.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { failure, type Failure } from './errors.js';
import type { EventBus } from './events.js';
import { ONE_STATEMENT, type Store } from './store.js';

const AGENTS = 'agents';
const OWNER = 'owner';
const LOGIN_CODES = 'owner-login-codes';
const SESSIONS = 'owner-sessions';
/** A sign-in link is good for 10 minutes (authority.md §1), an owner session for 12 hours. */
export const LOGIN_CODE_TTL_MS = 10 * 60 * 1000;
export const OWNER_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const CACHE_MS = 1000;

/** Agent names: what the owner types and reads in the inbox and the audit trail. */
export const AgentName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,63}$/,
    'an agent name is 1-64 characters: lowercase letters, digits, dot, dash or underscore, starting with a letter or digit',
  );

export const AgentRecordSchema = z.object({
  name: z.string(),
  tokenHash: z.string(),
  createdAt: z.number(),
  revokedAt: z.number().nullable(),
});
export type AgentRecord = z.infer<typeof AgentRecordSchema>;

/** An agent as listed: never its token or hash. */
export interface AgentInfo {
  name: string;
  createdAt: number;
  revokedAt: number | null;
}

export type Principal = { kind: 'owner' } | { kind: 'agent'; agent: string };

export interface Principals {
  /** Who a bearer token belongs to, or null for an unknown or revoked one. */
  authenticate(token: string): Promise<Principal | null>;
  /** Makes an agent and returns its token (the only time it is shown). */
  addAgent(name: string): Promise<{ name: string; token: string } | Failure>;
  /** Sets an agent's token (creating the agent), e.g. `--token` for `default`. */
  setAgentToken(name: string, token: string): Promise<void>;
  listAgents(): Promise<AgentInfo[]>;
  /** Revokes an agent: its token stops working on every instance. */
  revokeAgent(name: string): Promise<AgentInfo | Failure>;
  /** True when the agent exists and is not revoked. */
  isActive(name: string): Promise<boolean>;
  /** Whether an owner credential is set in the store. */
  hasOwner(): Promise<boolean>;
  /** Sets the owner's token (its hash is stored). */
  setOwnerToken(token: string): Promise<void>;
  /** True when `token` is the owner's. */
  isOwnerToken(token: string): Promise<boolean>;
  /** A single-use sign-in code for the web UI (the link printed at start), valid `ttlMs`. */
  issueLoginCode(ttlMs?: number): Promise<string>;
  /**
   * Signs the owner in with a login code or the owner token: a session id
   * (the cookie) and its CSRF token. Any instance on the store knows both.
   */
  signIn(proof: { code: string } | { token: string }): Promise<OwnerSession | Failure>;
  /** The owner session a cookie names, or null when unknown or expired. */
  ownerSession(sessionId: string): Promise<OwnerSession | null>;
  signOut(sessionId: string): Promise<void>;
}

export interface OwnerSession {
  id: string;
  csrf: string;
  expiresAt: number;
}

export interface PrincipalsOptions {
  store: Store;
  events: EventBus;
  now?: () => number;
}

/** A fresh token: 32 random bytes, base64url, with a prefix saying what it is for. */
export function newToken(prefix: 'ak_' | 'ok_' = 'ak_'): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export const tokenHash = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('hex');

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const info = (r: AgentRecord): AgentInfo => ({
  name: r.name,
  createdAt: r.createdAt,
  revokedAt: r.revokedAt,
});

export function createPrincipals({ store, events, now = Date.now }: PrincipalsOptions): Principals {
  // Token hash → agent and the owner's hash, reloaded after any change published
  // here or by another instance, and at least every second so a change made
  // straight in the store (the CLI with no server running) holds within a second.
  let cache: {
    at: number;
    agents: Promise<Map<string, string>>;
    owner: Promise<string | null>;
  } | null = null;
  const forget = () => {
    cache = null;
  };
  events.subscribe((e) => {
    if (e.data.event === 'agentsChanged' || e.data.event === 'ownerChanged') forget();
  });
  const cached = () => {
    if (cache && now() - cache.at < CACHE_MS) return cache;
    const agents = store
      .read((tx) => tx.records.list<AgentRecord>(AGENTS))
      .then(
        (rows) =>
          new Map(
            rows.filter((r) => r.value.revokedAt === null).map((r) => [r.value.tokenHash, r.key]),
          ),
      );
    const owner = store
      .read((tx) => tx.records.get<{ tokenHash: string }>(OWNER, 'token'))
      .then((r) => r?.value.tokenHash ?? null);
    const fresh = { at: now(), agents, owner };
    cache = fresh;
    // A failed read is not remembered.
    Promise.all([agents, owner]).catch(() => {
      if (cache === fresh) cache = null;
    });
    return fresh;
  };
  const load = () => cached().agents;
  const owner = () => cached().owner;

  const isOwnerToken = async (token: string) => {
    const ownerIs = await owner();
    return ownerIs !== null && sameHash(ownerIs, tokenHash(token));
  };

  const changed = (event: 'agentsChanged' | 'ownerChanged', detail: Record<string, unknown>) => {
    forget();
    events.publish({ event, ...detail });
  };

  const put = async (name: string, token: string, replace: boolean) => {
    const record: AgentRecord = {
      name,
      tokenHash: tokenHash(token),
      createdAt: now(),
      revokedAt: null,
    };
    return store.transaction(async (tx) => {
      const existing = await tx.records.get<AgentRecord>(AGENTS, name);
      if (existing && existing.value.revokedAt === null && !replace) return false;
      await tx.records.put(AGENTS, name, record);
      return true;
    });
  };

  return {
    async authenticate(token) {
      if (!token) return null;
      const hash = tokenHash(token);
      const ownerIs = await owner();
      if (ownerIs && sameHash(ownerIs, hash)) return { kind: 'owner' };
      const agent = (await load()).get(hash);
      return agent === undefined ? null : { kind: 'agent', agent };
    },

    async addAgent(name) {
      const parsed = AgentName.safeParse(name);
      if (!parsed.success)
        return failure(
          'malformedRequest',
          `Agent name '${name}': ${parsed.error.issues[0]?.message}.`,
        );
      const token = newToken('ak_');
      if (!(await put(name, token, false)))
        return failure(
          'malformedRequest',
          `An agent named '${name}' exists already; revoke it first or choose another name.`,
        );
      changed('agentsChanged', { agent: name, change: 'added' });
      return { name, token };
    },

    async setAgentToken(name, token) {
      await put(name, token, true);
      changed('agentsChanged', { agent: name, change: 'token' });
    },

    async listAgents() {
      const rows = await store.read((tx) => tx.records.list<AgentRecord>(AGENTS));
      return rows.map((r) => info(r.value));
    },

    async revokeAgent(name) {
      const revoked = await store.transaction(async (tx) => {
        const existing = await tx.records.get<AgentRecord>(AGENTS, name);
        if (!existing || existing.value.revokedAt !== null) return null;
        const record = { ...existing.value, revokedAt: now() };
        await tx.records.put(AGENTS, name, record);
        return record;
      });
      if (!revoked)
        return failure('notFound', `No active agent '${name}'; 'airlock agents list' shows them.`);
      changed('agentsChanged', { agent: name, change: 'revoked' });
      return info(revoked);
    },

    async isActive(name) {
      const r = await store.read((tx) => tx.records.get<AgentRecord>(AGENTS, name), ONE_STATEMENT);
      return r !== null && r.value.revokedAt === null;
    },

    hasOwner: async () => (await owner()) !== null,

    async setOwnerToken(token) {
      await store.transaction((tx) =>
        tx.records.put(OWNER, 'token', { tokenHash: tokenHash(token) }),
      );
      changed('ownerChanged', {});
    },

    isOwnerToken,

    async issueLoginCode(ttlMs = LOGIN_CODE_TTL_MS) {
      const code = randomBytes(24).toString('base64url');
      await store.transaction((tx) =>
        tx.records.put(LOGIN_CODES, tokenHash(code), { expiresAt: now() + ttlMs }),
      );
      return code;
    },

    async signIn(proof) {
      let accepted: boolean;
      if ('code' in proof) {
        // Single use: the code is deleted in the same transaction that accepts it.
        accepted = await store.transaction(async (tx) => {
          const key = tokenHash(proof.code);
          const found = await tx.records.get<{ expiresAt: number }>(LOGIN_CODES, key);
          if (!found) return false;
          await tx.records.delete(LOGIN_CODES, key);
          return found.value.expiresAt > now();
        });
      } else accepted = await isOwnerToken(proof.token);
      if (!accepted)
        return failure(
          'notAuthorized',
          'That sign-in link or owner token is not valid (links work once, for 10 minutes); use the link printed by airlock serve, or paste the contents of <data>/owner.token.',
        );
      const session: OwnerSession = {
        id: randomBytes(32).toString('base64url'),
        csrf: randomBytes(24).toString('base64url'),
        expiresAt: now() + OWNER_SESSION_TTL_MS,
      };
      await store.transaction((tx) =>
        tx.records.put(SESSIONS, tokenHash(session.id), {
          csrf: session.csrf,
          expiresAt: session.expiresAt,
        }),
      );
      return session;
    },

    async ownerSession(sessionId) {
      if (!sessionId) return null;
      const found = await store.read((tx) =>
        tx.records.get<{ csrf: string; expiresAt: number }>(SESSIONS, tokenHash(sessionId)),
      );
      if (!found || found.value.expiresAt <= now()) return null;
      return { id: sessionId, csrf: found.value.csrf, expiresAt: found.value.expiresAt };
    },

    async signOut(sessionId) {
      await store.transaction((tx) => tx.records.delete(SESSIONS, tokenHash(sessionId)));
      // Streams opened with that session end (transport/sse.ts asks again).
      changed('ownerChanged', { change: 'signedOut' });
    },
  };
}
