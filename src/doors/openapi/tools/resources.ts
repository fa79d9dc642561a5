/**
 * `<prefix>_resources {query?}`: without a query every resource path with
 * its method names; with one, the resources in which every word occurs
 * (path, summaries, method names) with their signatures.
 */
import { z } from 'zod';
import { defineTool } from '../../../kernel/index.js';
import { matches, signatureLine } from '../catalog-index.js';
import type { Runtime } from '../runtime.js';
import type { Shown } from '../present.js';
import type { Probe } from '../probe.js';

const Output = z.object({
  query: z.string().optional(),
  resources: z.array(z.object({ path: z.string(), methods: z.array(z.string()) })),
});

export function resourcesTool(rt: Runtime, probe: Probe) {
  const title = rt.index.catalog.source.title || 'the API';
  return defineTool({
    name: rt.tool('resources'),
    description: `Find a resource of ${title}. Without query: every resource path with its method names. With a query (e.g. "cycle work items", "webhook"): the resources where every word occurs, with method signatures name(args) [kind] — summary. Then call ${rt.tool('describe')} for the full signature and ${rt.tool('call')} to run it.`,
    input: z.object({ query: z.string().max(200).optional() }).strict(),
    output: Output,
    effect: 'read',
    annotations: { openWorldHint: false },
    handler: async ({ query }) => {
      const refused = await probe.check();
      if (refused) return refused;
      const q = query?.trim();
      if (!q) {
        const resources = rt.index.resources.map((r) => ({
          path: r.path,
          methods: [...r.methods.keys()],
        }));
        const text = [
          `${resources.length} resources of ${title} (resource: methods). ${rt.tool('describe')} {resource, method} shows a signature.`,
          ...resources.map((r) => `${r.path}: ${r.methods.join(', ')}`),
        ].join('\n');
        return { text, structured: { resources } } satisfies Shown;
      }
      const found = rt.index.resources.filter((r) => matches(r, q));
      if (found.length === 0) {
        const shorter = q.split(/\s+/).sort((a, b) => b.length - a.length)[0] ?? q;
        return {
          text: `No resource matches "${q}". Try a shorter query (one word such as "${shorter.replace(/s$/, '')}"), or no query to list every resource.`,
          structured: { query: q, resources: [] },
        } satisfies Shown;
      }
      const text = [
        `${found.length} resource${found.length > 1 ? 's' : ''} match "${q}":`,
        ...found.flatMap((r) => [
          '',
          r.path,
          ...[...r.methods.values()].map((m) => `  ${signatureLine(m)}`),
        ]),
      ].join('\n');
      return {
        text,
        structured: {
          query: q,
          resources: found.map((r) => ({
            path: r.path,
            methods: [...r.methods.values()].map(signatureLine),
          })),
        },
      } satisfies Shown;
    },
  });
}
