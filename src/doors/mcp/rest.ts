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

/** Records an owner action in the audit trail (the kernel's `audit.ownerAction`, once the door started). */
export type OwnerAudit = (tool: string, args: unknown, result: string) => Promise<unknown>;

export function upstreamRoutes(gateway: Gateway, audit: OwnerAudit): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'upstreams',
      summary: 'The mcp door’s upstreams: state, last stderr lines, tools and their effects',
      handler: async () => {
        const uncertain = await gateway.uncertainWrites();
        const upstreams = gateway.views().map((v) => ({
          ...v,
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
  ];
}
