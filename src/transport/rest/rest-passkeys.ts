/**
 * The owner's passkeys over REST (issue 25): list, enrol (the first one
 * needs only the signed-in owner; each further one, like removing one, is a
 * decision that needs the owner's presence), sign in with a passkey, and the
 * challenge for one decision — the page names the request it is about to
 * send, this route works out the decision exactly as the gate will
 * (`presence-gate.ts`) and returns WebAuthn options bound to it.
 */
import { z } from 'zod';
import type { Kernel } from '../../kernel/kernel.js';
import { failure, isFailure } from '../../kernel/errors.js';
import { decisionDigest } from '../../kernel/authority/presence.js';
import { validateInput } from '../../kernel/calls/validate.js';
import type { Passkeys } from './passkeys.js';
import { checkPresence, decisionOf, PRESENCE_HEADER } from './presence-gate.js';
import { createRouter } from '../http/router.js';
import { SESSION_HEADER } from '../auth.js';
import type { RestRequest, RestRoute } from '../surface.js';

const Name = z.string().trim().min(1).max(64);
const EnrolStart = z.object({ name: Name }).strict();
const Enrol = z.object({ name: Name, response: z.record(z.string(), z.unknown()) }).strict();
const Challenge = z
  .object({
    method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE']),
    /** The route path below /api/v1/, as the page will send it. */
    path: z.string().min(1).max(500),
    body: z.unknown().optional(),
  })
  .strict();

/** Enrolling a passkey; a further one is a decision (the owner's presence). */
function enrolPasskeyRoute(kernel: Kernel, passkeys: Passkeys): RestRoute {
  const enrolRoute: RestRoute = {
    method: 'POST',
    path: 'passkeys',
    summary:
      'Enrol a passkey {name, response} (the answer of navigator.credentials.create to passkeys/options); a further passkey needs the owner’s presence',
    handler: async (request) => {
      const parsed = validateInput(Enrol, request.body ?? {});
      if (!parsed.ok) return parsed;
      if ((await passkeys.list()).length > 0) {
        // Adding a credential is a decision once one exists (the gate cannot tell, so it is checked here).
        const absent = await checkPresence(
          kernel.presence,
          { ...enrolRoute, decides: true },
          'POST',
          'passkeys',
          request,
        );
        if (absent) return absent;
      }
      const made = await passkeys.enrol(parsed.value.name, parsed.value.response);
      await kernel.audit.ownerAction(
        'passkeys.add',
        'airlock',
        { name: parsed.value.name },
        'ok' in made ? made.code : 'ok',
      );
      return 'ok' in made ? made : { status: 201, body: made };
    },
  };
  return enrolRoute;
}

/** The options for the passkey assertion one decision needs (the enrol route counts as one). */
function presenceChallengeRoute(
  passkeys: Passkeys,
  deciding: () => readonly RestRoute[],
  enrolRoute: RestRoute,
): RestRoute {
  return {
    method: 'POST',
    path: 'presence/challenge',
    summary:
      'Options for the passkey assertion one decision needs: {method, path, body} of the request about to be sent; send the assertion (base64url JSON) in x-airlock-presence with it',
    handler: async (request) => {
      const parsed = validateInput(Challenge, request.body ?? {});
      if (!parsed.ok) return parsed;
      const { method, path, body } = parsed.value;
      const url = new URL(path.replace(/^\/*(api\/v1\/)?/, '/'), 'http://airlock/');
      const router = createRouter();
      for (const r of deciding()) router.add(r);
      const match = router.match(method, url.pathname.slice(1));
      const route = match.route;
      if (!route || (!route.decides && route !== enrolRoute))
        return failure(
          'malformedRequest',
          `${method} ${path} is not a decision; send it as it is.`,
        );
      const target: RestRequest = {
        params: match.params,
        query: url.searchParams,
        body: body ?? null,
        headers: {},
        caller: request.caller ?? null,
      };
      const decision = await decisionOf(
        route === enrolRoute ? { ...route, decides: true } : route,
        method,
        url.pathname.slice(1),
        target,
      );
      const options = await passkeys.assertionOptions(decisionDigest(decision!));
      return isFailure(options) ? options : { status: 200, body: options };
    },
  };
}

export function passkeyRoutes(
  kernel: Kernel,
  passkeys: Passkeys,
  deciding: () => readonly RestRoute[],
): RestRoute[] {
  const enrolRoute = enrolPasskeyRoute(kernel, passkeys);
  return [
    {
      method: 'GET',
      path: 'passkeys',
      summary: 'The owner’s passkeys (names and dates, never keys) and whether decisions need one',
      handler: async () => ({
        status: 200,
        body: {
          passkeys: await passkeys.list(),
          presence: { required: await kernel.presence.required(), header: PRESENCE_HEADER },
          relyingParty: passkeys.relyingParty(),
        },
      }),
    },
    {
      method: 'POST',
      path: 'passkeys/options',
      summary: 'Start enrolling a passkey {name} → options for navigator.credentials.create',
      handler: async ({ body }) => {
        const parsed = validateInput(EnrolStart, body ?? {});
        if (!parsed.ok) return parsed;
        const options = await passkeys.enrolOptions(parsed.value.name);
        return isFailure(options) ? options : { status: 200, body: options };
      },
    },
    enrolRoute,
    {
      method: 'DELETE',
      path: 'passkeys/{id}',
      decides: true,
      summary:
        'Remove a passkey (needs the owner’s presence; removing the last one needs ?confirm=last)',
      handler: async ({ params, query }) => {
        const all = await passkeys.list();
        if (!all.some((p) => p.id === params.id))
          return failure(
            'notFound',
            `No passkey ${params.id}; list them with GET /api/v1/passkeys.`,
          );
        if (all.length === 1 && query.get('confirm') !== 'last')
          return failure(
            'malformedRequest',
            'This is your last passkey: without one, decisions no longer need your presence. To remove it anyway, call again with ?confirm=last.',
          );
        await passkeys.remove(params.id!);
        await kernel.audit.ownerAction('passkeys.remove', 'airlock', { id: params.id }, 'ok');
        return { status: 200, body: { removed: params.id } };
      },
    },
    {
      method: 'POST',
      path: 'session/passkey-options',
      audience: 'public',
      summary: 'Options for signing in with a passkey (navigator.credentials.get)',
      handler: async () => {
        const options = await passkeys.assertionOptions(null);
        return isFailure(options) ? options : { status: 200, body: options };
      },
    },
    {
      method: 'POST',
      path: 'session/passkey',
      audience: 'public',
      summary:
        'Sign in with a passkey {response} (user verification required) → {session, sessionHeader}',
      handler: async ({ body }) => {
        const response = (body as { response?: unknown } | undefined)?.response;
        const verified = await passkeys.signIn(response);
        if (verified !== true) return verified;
        const session = await kernel.principals.openSession();
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
    presenceChallengeRoute(passkeys, deciding, enrolRoute),
  ];
}
