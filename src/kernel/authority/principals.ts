/**
 * The two kinds of principal (spec/authority.md §1): the owner, who runs
 * Airlock and decides, and the agents, MCP clients each with a name and a
 * token of its own. Neither can act as the other: a token is looked up by
 * its SHA-256 and answers exactly one principal.
 *
 * Tokens are random (32 bytes, base64url) and stored hashed; an agent's is
 * shown once, when it is made. The owner's hash is in the store so every
 * instance on one store knows it; the token itself lives in the owner's
 * `<data>/owner.token`.
 *
 * Every agent gets an id when it is made; what it is granted is bound to its
 * key (name and id, connection.ts `agentKey`), and revoking it cancels its
 * pending asks and ends its grants in the same transaction. A name made
 * again is a new agent that starts with nothing.
 *
 * Every change bumps the principals epoch in the store in its own
 * transaction, and each authentication first reads that epoch (one
 * statement; concurrent callers share one read begun after they arrived):
 * a revoke, a rotation or a new agent holds on every instance from its next
 * call, whether it came from this instance, another, or the CLI, with or
 * without a bus. Changes are also published (`agentsChanged`,
 * `ownerChanged`) for what listens (open sessions and event streams).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../digest.js';
import { z } from 'zod';
import { failure, type Failure } from '../errors.js';
import type { EventBus } from '../events/events.js';
import { ONE_STATEMENT, type Store, type StoreTx } from '../store.js';
import { agentKey, agentKeyOfConnection } from '../connection.js';
import { closed, shown } from './consent.js';
import type { Approval } from '../records.js';
import { PASSKEYS } from './presence.js';

const AGENTS = 'agents';
const OWNER = 'owner';
const CACHE_MS = 1000;
/** The principals epoch (collection, key): bumped by every change to an agent or the owner's token. */
const EPOCH = ['principals', 'epoch'] as const;
const LOGIN_CODES = 'owner-login-codes';
const SESSIONS = 'owner-sessions';
const TICKETS = 'owner-stream-tickets';
const TICKET_TTL_MS = 60 * 1000;
/** A sign-in link is good for 10 minutes (authority.md §1), an owner session for 12 hours. */
export const LOGIN_CODE_TTL_MS = 10 * 60 * 1000;
export const OWNER_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Agent names: what the owner types and reads in the inbox and the audit trail. */
export const AgentName = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9._-]{0,63}$/,
    'an agent name is 1-64 characters: lowercase letters, digits, dot, dash or underscore, starting with a letter or digit',
  );

export const AgentRecordSchema = z.object({
  name: z.string(),
  /** Made with the agent; absent on agents made before ids (their key is their name). */
  id: z.string().optional(),
  tokenHash: z.string(),
  createdAt: z.number(),
  revokedAt: z.number().nullable(),
});
export type AgentRecord = z.infer<typeof AgentRecordSchema>;

/** An agent as listed: never its token or hash. */
export interface AgentInfo {
  name: string;
  /** Made with the agent; null for an agent made before ids. */
  id: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** `agent`: the name (what rules match and people read); `key`: name and id (what grants bind to). */
export type Principal = { kind: 'owner' } | { kind: 'agent'; agent: string; key: string };

export interface Principals {
  /** Who a bearer token belongs to, or null for an unknown or revoked one. */
  authenticate(token: string): Promise<Principal | null>;
  /**
   * The active agent with this key (name and id), or null once it is revoked
   * or replaced by a later agent of the same name — as of the current epoch
   * (an OAuth access token acts as the agent its consent made).
   */
  agentByKey(key: string): Promise<{ agent: string; key: string } | null>;
  /** Makes an agent and returns its token (the only time it is shown). */
  addAgent(name: string): Promise<{ name: string; token: string } | Failure>;
  /** Sets an agent's token (creating the agent), e.g. `--token` for `default`. */
  setAgentToken(name: string, token: string): Promise<void>;
  listAgents(): Promise<AgentInfo[]>;
  /**
   * Revokes an agent: its token stops working on every instance, its pending
   * asks are cancelled and its grants end.
   */
  revokeAgent(name: string): Promise<AgentInfo | Failure>;
  /** True when the agent exists and is not revoked. */
  isActive(name: string): Promise<boolean>;
  /** Whether an owner credential is set in the store. */
  hasOwner(): Promise<boolean>;
  /** Whether the owner enrolled a passkey (issue 25): then the token file is not kept. */
  hasPasskey(): Promise<boolean>;
  /** Sets the owner's token (its hash is stored). */
  setOwnerToken(token: string): Promise<void>;
  /** True when `token` is the owner's. */
  isOwnerToken(token: string): Promise<boolean>;
  /** A single-use sign-in code for the web UI (the link printed at start), valid `ttlMs`. */
  issueLoginCode(ttlMs?: number): Promise<string>;
  /**
   * Signs the owner in with a login code or the owner token: a session
   * secret the page keeps in its own (origin-scoped) storage and sends as a
   * header, never a cookie (authority.md §1). Any instance on the store knows it.
   */
  signIn(proof: { code: string } | { token: string }): Promise<OwnerSession | Failure>;
  /** Opens an owner session for a sign-in proved elsewhere (a verified passkey assertion). */
  openSession(): Promise<OwnerSession>;
  /** The owner session a session secret names, or null when unknown or expired. */
  ownerSession(sessionId: string): Promise<OwnerSession | null>;
  signOut(sessionId: string): Promise<void>;
  /**
   * A single-use ticket (60 s) for one event stream of this session, for
   * `EventSource`, which cannot send the session header: `?ticket=` in the
   * stream's URL. The stream lives as long as the session does.
   */
  streamTicket(sessionId: string): Promise<string>;
  /** The session a ticket was issued for (the ticket is used up), or null. */
  redeemStreamTicket(ticket: string): Promise<OwnerSession | null>;
  /** Ends every owner session (every browser is signed out, its streams end). */
  endOwnerSessions(): Promise<number>;
}

export interface OwnerSession {
  id: string;
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

export const tokenHash = (token: string): string => sha256Hex(token);

/**
 * The hash of a bearer token presented on a request, remembered for the few
 * tokens a server sees again and again (one per agent; issue 31: a SHA-256
 * per call was a tenth of Airlock's own CPU on a trivial call). Which hash
 * is whose is still decided by `known()` as of the current epoch.
 */
const presented = new Map<string, string>();
const PRESENTED_MAX = 256;
function presentedHash(token: string): string {
  let hash = presented.get(token);
  if (hash === undefined) {
    if (presented.size >= PRESENTED_MAX) presented.clear();
    hash = tokenHash(token);
    presented.set(token, hash);
  }
  return hash;
}

const sameHash = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const info = (r: AgentRecord): AgentInfo => ({
  name: r.name,
  id: r.id ?? null,
  createdAt: r.createdAt,
  revokedAt: r.revokedAt,
});

/** An agent's id: 48 random bits, told apart only from earlier agents of the same name. */
const newAgentId = () => randomBytes(6).toString('hex');

/**
 * Epoch-changing transactions this process has finished, on any store: the
 * store's change mark moves only on other connections' commits (store.ts
 * `changeMark`), so a change made here invalidates every Principals of the
 * process through this count, taken after its commit.
 */
let localEpochChanges = 0;

/** Runs a transaction that bumps the epoch; counted once it has ended. */
const epochChange = <T>(store: Store, fn: (tx: StoreTx) => Promise<T>): Promise<T> =>
  store.transaction(fn).finally(() => void localEpochChanges++);

/** Bumps the principals epoch inside a change's own transaction. */
async function bumpEpoch(tx: StoreTx): Promise<void> {
  const found = await tx.records.get<{ n: number }>(...EPOCH);
  await tx.records.put(...EPOCH, { n: (found?.value.n ?? 0) + 1 });
}

interface Known {
  /** Token hash → the agent's name and key. */
  agents: Map<string, { name: string; key: string }>;
  owner: string | null;
}

/** What a revoke ended, for the events that tell the inbox and the grant list. */
interface Ended {
  cancelled: Approval[];
  grants: string[];
}

/** Cancels an agent's pending asks and ends its grants (authority.md §1: revoke). */
async function endAgent(tx: StoreTx, key: string, at: number): Promise<Ended> {
  const pending = [
    ...(await tx.approvals.listPendingOf(key)),
    // Rows from before approvals kept their agent: their connection names it.
    ...(await tx.approvals.listPendingOf(null)).filter(
      (a) => agentKeyOfConnection(a.connection) === key,
    ),
  ];
  const cancelled: Approval[] = [];
  for (const a of pending) {
    const done = await tx.approvals.decide(a.id, closed('cancelled', at, 'the agent was revoked'));
    if (done) cancelled.push(done);
  }
  const grants: string[] = [];
  for (const g of await tx.grants.listActive(at))
    if (agentKeyOfConnection(g.connection) === key && (await tx.grants.revoke(g.id, at)))
      grants.push(g.id);
  return { cancelled, grants };
}

/** Deletes every owner session record; how many there were. */
async function deleteSessions(tx: StoreTx): Promise<number> {
  const rows = await tx.records.list(SESSIONS);
  for (const r of rows) await tx.records.delete(SESSIONS, r.key);
  return rows.length;
}

/**
 * The agents' and the owner's token hashes as of the store's current
 * principals epoch: the epoch is read (one read at a time, coalesced) only
 * when the store's change mark or this process's own epoch changes moved,
 * and the hashes are read again only when the epoch moved (or a second
 * passed).
 */
function knownPrincipals(store: Store, now: () => number): () => Promise<Known> {
  // Token hashes of the agents and the owner, as of one epoch (and read again
  // every second anyway, for a writer that does not move the epoch: an older
  // Airlock on the same store).
  let cache: { epoch: number; at: number; known: Promise<Known> } | null = null;

  const readEpoch = () =>
    store
      .read((tx) => tx.records.get<{ n: number }>(...EPOCH), ONE_STATEMENT)
      .then((r) => r?.value.n ?? 0);
  // One epoch read at a time; a caller that arrives while one is under way
  // waits for the next, so what it learns was read after it arrived.
  let reading: Promise<number> | null = null;
  let queued: Promise<number> | null = null;
  const startRead = () => {
    const read = readEpoch();
    reading = read;
    void read
      .finally(() => {
        if (reading === read) reading = null;
      })
      .catch(() => undefined);
    return read;
  };
  // The epoch as of a store change mark (store.ts `changeMark`: other
  // connections' commits) and of this process's own epoch changes: while
  // both stand, nobody changed an agent or the owner, so the epoch stands unread.
  let marked: { mark: number; local: number; epoch: number } | null = null;
  const freshEpoch = (): Promise<number> => {
    const mark = store.changeMark?.() ?? null;
    if (mark === null) return readEpochCoalesced();
    const local = localEpochChanges;
    if (marked?.mark === mark && marked.local === local) return Promise.resolve(marked.epoch);
    const read = readEpochCoalesced();
    // Taken before the read: a commit during it moves the mark, and the next call reads again.
    void read.then(
      (epoch) => (marked = { mark, local, epoch }),
      () => undefined,
    );
    return read;
  };
  const readEpochCoalesced = (): Promise<number> => {
    if (!reading) return startRead();
    queued ??= reading
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return startRead();
      });
    return queued;
  };

  const loadKnown = () =>
    store.read(async (tx): Promise<Known> => {
      const rows = await tx.records.list<AgentRecord>(AGENTS);
      const owner = await tx.records.get<{ tokenHash: string }>(OWNER, 'token');
      return {
        agents: new Map(
          rows
            .filter((r) => r.value.revokedAt === null)
            .map((r) => [r.value.tokenHash, { name: r.key, key: agentKey(r.key, r.value.id) }]),
        ),
        owner: owner?.value.tokenHash ?? null,
      };
    });

  /** The agents and the owner as of the store's current epoch. */
  const known = async (): Promise<Known> => {
    const epoch = await freshEpoch();
    if (cache?.epoch === epoch && now() - cache.at < CACHE_MS) return cache.known;
    const fresh = { epoch, at: now(), known: loadKnown() };
    cache = fresh;
    // A failed read is not remembered.
    fresh.known.catch(() => {
      if (cache === fresh) cache = null;
    });
    return fresh.known;
  };
  return known;
}

/** The owner's sign-in: one-time login codes, owner sessions and SSE stream tickets. */
function ownerSignIn(
  store: Store,
  now: () => number,
  isOwnerToken: (token: string) => Promise<boolean>,
): Pick<
  Principals,
  | 'issueLoginCode'
  | 'signIn'
  | 'openSession'
  | 'ownerSession'
  | 'streamTicket'
  | 'redeemStreamTicket'
> {
  const openSession = async (): Promise<OwnerSession> => {
    const session: OwnerSession = {
      id: `os_${randomBytes(32).toString('base64url')}`,
      expiresAt: now() + OWNER_SESSION_TTL_MS,
    };
    await store.transaction((tx) =>
      tx.records.put(SESSIONS, tokenHash(session.id), { expiresAt: session.expiresAt }),
    );
    return session;
  };

  const ownerSession: Principals['ownerSession'] = async (sessionId) => {
    if (!sessionId) return null;
    const found = await store.read((tx) =>
      tx.records.get<{ expiresAt: number }>(SESSIONS, tokenHash(sessionId)),
    );
    if (!found || found.value.expiresAt <= now()) return null;
    return { id: sessionId, expiresAt: found.value.expiresAt };
  };
  return {
    openSession,
    ownerSession,
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
      return openSession();
    },

    async streamTicket(sessionId) {
      const ticket = `st_${randomBytes(24).toString('base64url')}`;
      await store.transaction((tx) =>
        tx.records.put(TICKETS, tokenHash(ticket), {
          session: sessionId,
          expiresAt: now() + TICKET_TTL_MS,
        }),
      );
      return ticket;
    },

    async redeemStreamTicket(ticket) {
      const found = await store.transaction(async (tx) => {
        const key = tokenHash(ticket);
        const row = await tx.records.get<{ session: string; expiresAt: number }>(TICKETS, key);
        if (row) await tx.records.delete(TICKETS, key);
        return row && row.value.expiresAt > now() ? row.value.session : null;
      });
      return found ? ownerSession(found) : null;
    },
  };
}

export function createPrincipals({ store, events, now = Date.now }: PrincipalsOptions): Principals {
  const known = knownPrincipals(store, now);
  const owner = async () => (await known()).owner;

  const isOwnerToken = async (token: string) => {
    const ownerIs = await owner();
    return ownerIs !== null && sameHash(ownerIs, tokenHash(token));
  };

  const changed = (event: 'agentsChanged' | 'ownerChanged', detail: Record<string, unknown>) => {
    events.publish({ event, ...detail });
  };

  /** Sets an agent's token: a new agent (a new id) unless `replace` finds it active. */
  const put = async (name: string, token: string, replace: boolean) =>
    epochChange(store, async (tx) => {
      const existing = await tx.records.get<AgentRecord>(AGENTS, name);
      const active = existing && existing.value.revokedAt === null ? existing.value : null;
      if (active && !replace) return false;
      const record: AgentRecord = active
        ? { ...active, tokenHash: tokenHash(token) }
        : {
            name,
            id: newAgentId(),
            tokenHash: tokenHash(token),
            createdAt: now(),
            revokedAt: null,
          };
      await tx.records.put(AGENTS, name, record);
      await bumpEpoch(tx);
      return true;
    });

  return {
    async authenticate(token) {
      if (!token) return null;
      const hash = presentedHash(token);
      const { owner: ownerIs, agents } = await known();
      if (ownerIs && sameHash(ownerIs, hash)) return { kind: 'owner' };
      const agent = agents.get(hash);
      return agent === undefined ? null : { kind: 'agent', agent: agent.name, key: agent.key };
    },

    async agentByKey(key) {
      const { agents } = await known();
      for (const a of agents.values()) if (a.key === key) return { agent: a.name, key: a.key };
      return null;
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
      const revoked = await epochChange(store, async (tx) => {
        const existing = await tx.records.get<AgentRecord>(AGENTS, name);
        if (!existing || existing.value.revokedAt !== null) return null;
        const at = now();
        const record = { ...existing.value, revokedAt: at };
        await tx.records.put(AGENTS, name, record);
        await bumpEpoch(tx);
        return { record, ended: await endAgent(tx, agentKey(name, record.id), at) };
      });
      if (!revoked)
        return failure('notFound', `No active agent '${name}'; 'airlock agents list' shows them.`);
      const key = agentKey(name, revoked.record.id);
      changed('agentsChanged', { agent: name, key, change: 'revoked' });
      for (const a of revoked.ended.cancelled)
        events.publish({ event: 'approvalDecided', approval: shown(a) });
      for (const grantId of revoked.ended.grants)
        events.publish({ event: 'grantRevoked', grantId });
      return info(revoked.record);
    },

    async isActive(name) {
      const r = await store.read((tx) => tx.records.get<AgentRecord>(AGENTS, name), ONE_STATEMENT);
      return r !== null && r.value.revokedAt === null;
    },

    hasOwner: async () => (await owner()) !== null,

    hasPasskey: async () =>
      (await store.read((tx) => tx.records.list(PASSKEYS, { limit: 1 }))).length > 0,

    async setOwnerToken(token) {
      await epochChange(store, async (tx) => {
        await tx.records.put(OWNER, 'token', { tokenHash: tokenHash(token) });
        await bumpEpoch(tx);
        await deleteSessions(tx);
      });
      changed('ownerChanged', {});
    },

    async endOwnerSessions() {
      const ended = await store.transaction(deleteSessions);
      changed('ownerChanged', { change: 'signedOut' });
      return ended;
    },

    isOwnerToken,

    ...ownerSignIn(store, now, isOwnerToken),

    async signOut(sessionId) {
      await store.transaction((tx) => tx.records.delete(SESSIONS, tokenHash(sessionId)));
      // Streams opened with that session end (transport/http/sse.ts asks again).
      changed('ownerChanged', { change: 'signedOut' });
    },
  };
}
