/**
 * The web UI's owner session (authority.md §1): sign in with the single-use
 * link printed at start (`/login#code=…`) or by pasting the owner token; the
 * session is an HttpOnly, SameSite=Strict cookie, and every state-changing
 * request also carries the CSRF token this route returns.
 */
import { z } from 'zod';
import type { Principals } from '../kernel/principals.js';
import { OWNER_SESSION_TTL_MS } from '../kernel/principals.js';
import { validateInput } from '../kernel/validate.js';
import { CSRF_HEADER, SESSION_COOKIE } from './auth.js';
import type { RestRoute } from './surface.js';

const SignIn = z.union([
  z.object({ code: z.string().min(1).max(200) }).strict(),
  z.object({ token: z.string().min(1).max(500) }).strict(),
]);

const cookie = (value: string, maxAgeSeconds: number) =>
  `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;

export function sessionRoutes(principals: Principals): RestRoute[] {
  return [
    {
      method: 'POST',
      path: 'session',
      audience: 'public',
      summary:
        'Owner sign-in for the web UI: {code} from the printed link, or {token} (the owner token) → cookie and {csrf}',
      handler: async ({ body }) => {
        const parsed = validateInput(SignIn, body ?? {});
        if (!parsed.ok) return parsed;
        const session = await principals.signIn(parsed.value);
        if ('ok' in session) return session;
        return {
          status: 200,
          body: { owner: true, csrf: session.csrf, csrfHeader: CSRF_HEADER },
          headers: { 'set-cookie': cookie(session.id, Math.floor(OWNER_SESSION_TTL_MS / 1000)) },
        };
      },
    },
    {
      method: 'GET',
      path: 'session',
      audience: 'public',
      summary: 'Whether this browser is signed in as the owner: {owner, csrf?}',
      handler: async ({ caller }) =>
        caller?.kind === 'owner' && caller.via === 'cookie'
          ? {
              status: 200,
              body: { owner: true, csrf: caller.session.csrf, csrfHeader: CSRF_HEADER },
            }
          : { status: 200, body: { owner: caller?.kind === 'owner' } },
    },
    {
      method: 'DELETE',
      path: 'session',
      summary: 'Sign this browser out',
      handler: async ({ caller }) => {
        if (caller?.kind === 'owner' && caller.via === 'cookie')
          await principals.signOut(caller.session.id);
        return { status: 204, headers: { 'set-cookie': cookie('', 0) } };
      },
    },
  ];
}
