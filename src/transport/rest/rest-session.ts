/**
 * The web UI's owner session (authority.md §1): sign in with the single-use
 * link printed at start (`/login#code=…`) or by pasting the owner token; the
 * answer carries the session secret, which the page keeps in its own
 * sessionStorage and sends in the `x-airlock-session` header on every
 * request. No cookie is set: nothing the browser sends on its own (to this
 * or any other port) signs anyone in, and no answer hands a session secret
 * to a request that did not prove itself with a code or the owner token.
 */
import { z } from 'zod';
import type { Principals } from '../../kernel/authority/principals.js';
import { validateInput } from '../../kernel/calls/validate.js';
import { failure } from '../../kernel/errors.js';
import { SESSION_HEADER } from '../auth.js';
import type { RestRoute } from '../surface.js';

const SignIn = z.union([
  z.object({ code: z.string().min(1).max(200) }).strict(),
  z.object({ token: z.string().min(1).max(500) }).strict(),
]);

export function sessionRoutes(principals: Principals): RestRoute[] {
  return [
    {
      method: 'POST',
      path: 'session',
      audience: 'public',
      summary:
        'Owner sign-in for the web UI: {code} from the printed link, or {token} (the owner token) → {session, sessionHeader}: send the session in that header on every request',
      handler: async ({ body }) => {
        const parsed = validateInput(SignIn, body ?? {});
        if (!parsed.ok) return parsed;
        const session = await principals.signIn(parsed.value);
        if ('ok' in session) return session;
        return {
          status: 200,
          body: {
            owner: true,
            session: session.id,
            sessionHeader: SESSION_HEADER,
            expiresAt: session.expiresAt,
          },
          headers: { 'cache-control': 'no-store' },
        };
      },
    },
    {
      method: 'GET',
      path: 'session',
      audience: 'public',
      summary: 'Whether the request is the owner’s (its session header or owner token): {owner}',
      handler: async ({ caller }) => ({
        status: 200,
        body: { owner: caller?.kind === 'owner' },
      }),
    },
    {
      method: 'POST',
      path: 'session/stream-ticket',
      summary:
        'A single-use ticket (60 s) for one event stream of this browser session: GET /api/v1/events?ticket=… or /events?ticket=… (for EventSource, which cannot send the session header)',
      handler: async ({ caller }) =>
        caller?.kind === 'owner' && caller.via === 'session'
          ? {
              status: 200,
              body: { ticket: await principals.streamTicket(caller.session.id) },
              headers: { 'cache-control': 'no-store' },
            }
          : failure(
              'malformedRequest',
              'Stream tickets are for a signed-in browser session; send the session header (a bearer token can open the stream itself).',
            ),
    },
    {
      method: 'DELETE',
      path: 'session',
      summary: 'Sign this browser out (the session in the request’s header ends)',
      handler: async ({ caller }) => {
        if (caller?.kind === 'owner' && caller.via === 'session')
          await principals.signOut(caller.session.id);
        return { status: 204 };
      },
    },
  ];
}
