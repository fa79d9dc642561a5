/**
 * The owner's routes that connect an OAuth upstream (spec/gateway.md §1
 * "OAuth upstreams"), beside the door's other `upstreams` routes:
 *
 * - `POST /api/v1/upstreams/{name}/connect` — an owner decision (presence
 *   gate): starts the connect and answers `{upstream, authorizationUrl}`;
 *   the web UI sends the owner's browser there. The redirect URL is this
 *   server's own origin (the page's, else the Host the guards admitted) at
 *   `CALLBACK_PATH`.
 * - `POST /api/v1/upstreams/oauth/callback {state, code | error, iss?}` — the
 *   web UI, loaded at `CALLBACK_PATH` by the authorization server's
 *   redirect, hands the answer over with the owner's session; the state
 *   names the pending connect (single use, 10 minutes).
 *
 * Both are audited as the owner's actions (`upstream.connect`,
 * `upstream.connected`), with the upstream's name only: never a code, a
 * verifier or a token. Agents are refused (owner routes).
 */
import { z } from 'zod';
import { failure, type Failure } from '../../../kernel/index.js';
import type { RestRequest, RestRoute } from '../../../transport/surface.js';
import type { Gateway } from '../gateway.js';
import type { OwnerAudit } from '../rest.js';
import { ConnectRefused } from './client.js';

/** Where the upstream's authorization server sends the owner's browser back (a page of the web UI). */
export const CALLBACK_PATH = '/upstream-oauth/callback';

const CallbackBody = z
  .object({
    state: z.string().min(1).max(512),
    code: z.string().min(1).max(4096).optional(),
    iss: z.string().max(2048).optional(),
    error: z.string().max(256).optional(),
    error_description: z.string().max(2048).optional(),
  })
  .strict();

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** This server's origin as the owner's browser reaches it. */
function ownOrigin(request: RestRequest): string | null {
  const origin = one(request.headers.origin);
  if (origin && /^https?:\/\/[^/]+$/i.test(origin)) return origin;
  const host = one(request.headers.host);
  return host ? `http://${host}` : null;
}

export function connectRoutes(gateway: Gateway, audit: OwnerAudit): RestRoute[] {
  return [
    {
      method: 'POST',
      path: 'upstreams/{name}/connect',
      decides: true,
      summary: 'Start connecting an OAuth upstream: answers the authorization URL to open',
      handler: async ({
        params,
        ...request
      }): Promise<Failure | { status: number; body: unknown }> => {
        const args = { upstream: params.name };
        const rt = gateway.runtime(params.name ?? '');
        if (!rt?.authorization) {
          await audit('upstream.connect', args, 'notFound');
          return failure(
            'notFound',
            `No OAuth upstream named '${params.name}'; GET /api/v1/upstreams lists them (an upstream takes OAuth with "oauth": {} in its config).`,
          );
        }
        const origin = ownOrigin({ params, ...request });
        if (!origin)
          return failure(
            'malformedRequest',
            'Send the request with a Host header; fix it and send again.',
          );
        try {
          const url = await rt.authorization.begin(`${origin}${CALLBACK_PATH}`);
          await audit('upstream.connect', args, 'ok');
          return { status: 200, body: { upstream: rt.name, authorizationUrl: url.href } };
        } catch (error) {
          await audit('upstream.connect', args, 'unavailable');
          const why = rt.scrub(error instanceof Error ? error.message : String(error));
          return failure(
            'unavailable',
            error instanceof ConnectRefused
              ? why
              : `Could not start connecting '${rt.name}': ${why}. Check that the upstream is reachable and offers OAuth, then choose Connect again.`,
            { upstream: rt.name },
          );
        }
      },
    },
    {
      method: 'POST',
      path: 'upstreams/oauth/callback',
      summary: 'Finish connecting an OAuth upstream with its authorization server’s answer',
      handler: async ({ body }) => {
        const parsed = CallbackBody.safeParse(body);
        if (!parsed.success)
          return failure(
            'malformedRequest',
            'Send {"state", "code"} (or {"state", "error"}) as the authorization server gave them; fix the body and send again.',
          );
        const { state, code, iss, error, error_description } = parsed.data;
        let rt = null;
        for (const r of gateway.runtimes)
          if (r.authorization && (await r.authorization.pending(state))) rt = r;
        if (!rt?.authorization)
          return failure(
            'notFound',
            'No connect is waiting for this answer (it expired after 10 minutes, or was answered already); choose Connect again on the Upstreams screen.',
          );
        const args = { upstream: rt.name };
        if (error || !code) {
          await audit('upstream.connected', args, 'refused');
          return failure(
            'upstreamError',
            rt.scrub(
              `The authorization server of '${rt.name}' did not authorize Airlock (${error ?? 'no code'}${error_description ? `: ${error_description}` : ''}); choose Connect again to retry.`,
            ),
            { upstream: rt.name },
          );
        }
        try {
          await rt.authorization.finish({ code, state, iss });
        } catch (err) {
          await audit('upstream.connected', args, 'refused');
          const why = rt.scrub(err instanceof Error ? err.message : String(err));
          return failure(
            'upstreamError',
            err instanceof ConnectRefused
              ? why
              : `The authorization server of '${rt.name}' refused the answer: ${why}. Choose Connect again.`,
            { upstream: rt.name },
          );
        }
        await audit('upstream.connected', args, 'ok');
        // Connected: the upstream starts now (its tools are listed as it does).
        await rt.upstream.start().catch(() => undefined);
        return {
          status: 200,
          body: { upstream: rt.name, authorization: await rt.authorization.view() },
        };
      },
    },
  ];
}
