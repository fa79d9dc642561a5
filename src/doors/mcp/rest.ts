/**
 * The owner's REST view of the upstreams (owner only, like every route that
 * does not say otherwise): `GET /api/v1/upstreams` — state, restarts, last
 * stderr lines, tools with their effects — and
 * `PUT /api/v1/upstreams/{name}/tools/{tool}/effect {effect}` to override
 * the effect Airlock assumes for one upstream tool (`effect: null` goes back
 * to the annotations'), audited as the owner's action (`upstream.effect`,
 * door `mcp`, like a policy change). Agents are refused: annotations are the upstream's
 * claim, and only the owner decides what Airlock believes.
 */
import { z } from 'zod';
import { failure } from '../../kernel/index.js';
import type { RestRoute } from '../../transport/surface.js';
import { EffectSchema } from './config.js';
import type { Gateway } from './gateway.js';

const EffectBody = z.object({ effect: EffectSchema.nullable() }).strict();
const ReviewBody = z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

/** Records an owner action in the audit trail (the kernel's `audit.ownerAction`, once the door started). */
export type OwnerAudit = (tool: string, args: unknown, result: string) => Promise<unknown>;

export function upstreamRoutes(gateway: Gateway, audit: OwnerAudit): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'upstreams',
      summary: 'The mcp door’s upstreams: state, last stderr lines, tools and their effects',
      handler: async () => {
        const [authorizations, uncertain] = await Promise.all([
          gateway.authorizations(),
          gateway.uncertainWrites(),
        ]);
        const upstreams = gateway.views().map((v) => ({
          ...v,
          ...(authorizations[v.name] ? { authorization: authorizations[v.name] } : {}),
          uncertainWrites: uncertain.get(v.name) ?? [],
        }));
        return { status: 200, body: { upstreams } };
      },
    },
    {
      method: 'PUT',
      path: 'upstreams/{name}/tools/{tool}/effect',
      decides: true,
      summary: 'Override the effect assumed for one upstream tool (null: back to its annotations)',
      handler: async ({ params, body }) => {
        const parsed = EffectBody.safeParse(body);
        if (!parsed.success)
          return failure(
            'malformedRequest',
            'Send {"effect": "read" | "write" | "destructive" | null}; fix the body and send again.',
          );
        // An effect decides what the policy asks: the override is a policy change, audited as the owner's.
        const args = { upstream: params.name, tool: params.tool, effect: parsed.data.effect };
        const rt = gateway.runtime(params.name ?? '');
        if (!rt) {
          await audit('upstream.effect', args, 'notFound');
          return failure(
            'notFound',
            `No upstream named '${params.name}'; GET /api/v1/upstreams lists them.`,
          );
        }
        const view = await gateway.setEffect(rt.name, params.tool ?? '', parsed.data.effect);
        await audit('upstream.effect', args, view ? 'ok' : 'notFound');
        if (!view)
          return failure(
            'notFound',
            `The upstream '${rt.name}' lists no tool '${params.tool}' (or is not connected yet); GET /api/v1/upstreams lists its tools.`,
          );
        return { status: 200, body: { upstream: rt.name, tool: view } };
      },
    },
    {
      method: 'POST',
      path: 'upstreams/{name}/tools/{tool}/review',
      decides: true,
      summary:
        'Pin one upstream tool’s definition as reviewed (the digest shown in GET /upstreams)',
      handler: async ({ params, body }) => {
        const parsed = ReviewBody.safeParse(body);
        if (!parsed.success)
          return failure(
            'malformedRequest',
            'Send {"digest": "<the tool’s digest from GET /api/v1/upstreams>"}; fix the body and send again.',
          );
        const args = { upstream: params.name, tool: params.tool, digest: parsed.data.digest };
        const outcome = await gateway.review(
          params.name ?? '',
          params.tool ?? '',
          parsed.data.digest,
        );
        await audit('upstream.review', args, typeof outcome === 'string' ? outcome : 'ok');
        if (outcome === 'notFound')
          return failure(
            'notFound',
            `No tool '${params.tool}' on an upstream named '${params.name}' (or it is not connected yet); GET /api/v1/upstreams lists them.`,
          );
        if (outcome === 'notPinned')
          return failure(
            'malformedRequest',
            `The upstream '${params.name}' is configured with trust "annotations": nothing is pinned. Set trust to "pin" in the configuration to review its tools.`,
          );
        if (outcome === 'stale')
          return failure(
            'versionConflict',
            `The definition of ${params.tool} changed since it was shown; reload the Upstreams screen, look at it again, and pin what you see.`,
          );
        return { status: 200, body: { upstream: params.name, tool: outcome } };
      },
    },
  ];
}
