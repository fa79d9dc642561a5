/**
 * Who is calling (spec/authority.md §1, §4): the owner (owner token as a
 * bearer, or the web UI's session secret in the `x-airlock-session`
 * header), an agent (its own token), or, on a loopback bind started with
 * `--allow-anonymous`, the agent `anonymous`. Each route declares its
 * audience; this module decides whether a caller may use it.
 *
 * No cookie is read, ever (issue 25): a browser sends cookies to every port
 * of a host, so a page an agent serves on another local port would receive
 * one. The session secret lives in the UI page's own sessionStorage, which
 * no other origin can read, and a custom header cannot be sent cross-origin
 * without a CORS preflight this server never answers.
 */
import type { IncomingMessage } from 'node:http';
import type { OwnerSession, Principals } from '../kernel/authority/principals.js';
import { failure, type Failure } from '../kernel/errors.js';
import { header } from './http/http-util.js';
import type { Audience } from './surface.js';

export type Caller =
  | { kind: 'owner'; via: 'bearer' }
  | { kind: 'owner'; via: 'session'; session: OwnerSession }
  /** `agent`: the name; `key`: name and id, what its sessions, grants and tasks bind to. */
  | { kind: 'agent'; agent: string; key: string }
  | { kind: 'anonymous' };

export const ANONYMOUS_AGENT = 'anonymous';
/** The header the web UI sends its owner session secret in, on every request. */
export const SESSION_HEADER = 'x-airlock-session';

export interface AuthOptions {
  principals: Principals;
  /** Admit requests without a credential as the agent `anonymous` (loopback binds only). */
  allowAnonymous?: boolean;
  /**
   * An OAuth access token (authority.md §7): the agent it acts as on this
   * request, a refusal saying why, or null when it is no token of this server.
   */
  accessToken?: (
    token: string,
    req: IncomingMessage,
  ) => Promise<{ agent: string; key: string } | { refused: string } | null>;
}

/** The agent a caller acts as on MCP and agent routes (null for the owner). */
export const agentOf = (caller: Caller): string | null =>
  caller.kind === 'agent' ? caller.agent : caller.kind === 'anonymous' ? ANONYMOUS_AGENT : null;

/** The agent's key (connection.ts `agentKey`): what connections made for this caller carry. */
export const agentKeyOfCaller = (caller: Caller): string | null =>
  caller.kind === 'agent' ? caller.key : caller.kind === 'anonymous' ? ANONYMOUS_AGENT : null;

const NEEDS_TOKEN =
  'Send Authorization: Bearer <agent token>; the owner creates one with `airlock agents add NAME` (airlock serve prints the default agent’s client configuration).';

/** The request's own origin as a browser on this host would send it. */
function ownOrigin(req: IncomingMessage): string | undefined {
  const host = header(req, 'host');
  return host ? `http://${host}` : undefined;
}

/** True when a browser request comes from a page of this very server (or from no page at all). */
export function sameOriginOrNone(req: IncomingMessage): boolean {
  const origin = header(req, 'origin');
  if (origin === undefined) {
    const site = header(req, 'sec-fetch-site');
    return site === undefined || site === 'same-origin' || site === 'none';
  }
  return origin === ownOrigin(req) || origin === ownOrigin(req)?.replace('http:', 'https:');
}

/**
 * The caller, a failure for a credential that was sent but is not valid (a
 * wrong token never falls back to anonymous), or null for no credential.
 */
export async function identifyCaller(
  req: IncomingMessage,
  options: AuthOptions,
): Promise<Caller | Failure | null> {
  const auth = header(req, 'authorization');
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const principal = match ? await options.principals.authenticate(match[1]!) : null;
    if (!principal) {
      const oauth = match && options.accessToken ? await options.accessToken(match[1]!, req) : null;
      if (oauth && 'agent' in oauth) return { kind: 'agent', agent: oauth.agent, key: oauth.key };
      return failure(
        'notAuthorized',
        oauth?.refused ?? `The bearer token is not valid, expired or was revoked. ${NEEDS_TOKEN}`,
      );
    }
    return principal.kind === 'owner'
      ? { kind: 'owner', via: 'bearer' }
      : { kind: 'agent', agent: principal.agent, key: principal.key };
  }
  const sid = header(req, SESSION_HEADER);
  if (sid !== undefined) {
    const session = await options.principals.ownerSession(sid);
    if (!session)
      return failure(
        'notAuthorized',
        'This browser session ended (signed out, expired, or the owner token was rotated); sign in again.',
      );
    return { kind: 'owner', via: 'session', session };
  }
  // A page on another local port is not the owner's terminal: no anonymous access for it.
  if (options.allowAnonymous && sameOriginOrNone(req)) return { kind: 'anonymous' };
  return null;
}

const changesState = (req: IncomingMessage) => req.method !== 'GET' && req.method !== 'HEAD';

/**
 * Whether `caller` may use a route of `audience`: null when admitted, else
 * the failure and its HTTP status (401 without a credential, 403 otherwise).
 */
export function admit(
  req: IncomingMessage,
  audience: Audience,
  caller: Caller | null,
): { failure: Failure; status: 401 | 403 } | null {
  if (audience === 'public') return null;
  if (!caller)
    return {
      status: 401,
      failure: failure(
        'notAuthorized',
        audience === 'owner'
          ? 'This route is the owner’s: sign in to the web UI, or send Authorization: Bearer <owner token> (the contents of <data>/owner.token).'
          : `No credential. ${NEEDS_TOKEN}`,
      ),
    };
  if (audience === 'owner' && caller.kind !== 'owner')
    return {
      status: 403,
      failure: failure(
        'notAuthorized',
        'This route is the owner’s; an agent cannot use it. Ask the owner to act in the Airlock web UI or CLI.',
      ),
    };
  if (caller.kind === 'owner' && caller.via === 'session' && changesState(req)) {
    // Defence in depth: a browser session changes things only from this server's own page.
    if (!sameOriginOrNone(req) || header(req, 'origin') === undefined)
      return {
        status: 403,
        failure: failure(
          'notAuthorized',
          'A signed-in browser may change things only from this server’s own page (exact origin); use the Airlock web UI itself.',
        ),
      };
  }
  return null;
}
