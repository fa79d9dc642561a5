/**
 * Owner decisions need the owner's presence (issue 25): the one check every
 * surface that runs owner routes makes before a deciding route's handler —
 * the HTTP app and the CLI deciding in process alike. Whether a proof is
 * needed and whether it holds is the kernel's call (`kernel.presence`);
 * this module only says which decision a request is.
 */
import type { Failure } from '../../kernel/errors.js';
import type { OwnerDecision, Presence } from '../../kernel/authority/presence.js';
import type { RestRequest, RestRoute } from '../surface.js';

/** The header a decision's proof travels in: base64url JSON of the WebAuthn assertion. */
export const PRESENCE_HEADER = 'x-airlock-presence';

/** The decision a request to a deciding route is, or null for a route that decides nothing. */
export async function decisionOf(
  route: RestRoute,
  method: string,
  path: string,
  request: RestRequest,
): Promise<OwnerDecision | null> {
  if (!route.decides) return null;
  const facts = route.decides === true ? {} : await route.decides(request);
  return { method, path: path.replace(/^\/+/, ''), body: request.body ?? null, facts };
}

/** Null when the route may run; the refusal otherwise. */
export async function checkPresence(
  presence: Presence,
  route: RestRoute,
  method: string,
  path: string,
  request: RestRequest,
): Promise<Failure | null> {
  const decision = await decisionOf(route, method, path, request);
  if (!decision) return null;
  const proof = request.headers[PRESENCE_HEADER];
  return presence.check(decision, typeof proof === 'string' ? proof : undefined);
}
