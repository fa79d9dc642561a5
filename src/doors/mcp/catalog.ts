/**
 * The compact form of a mount (spec/gateway.md §2 "Bounded"): when the whole
 * `/mcp` `tools/list` would be over its token budget, an upstream is listed
 * as two tools instead of all of its own — `NAME_search_tools` (a query →
 * the best matching tools' names, descriptions and effects, ranked by BM25
 * over their names and descriptions; no embeddings) and `NAME_call_tool`
 * (a name and its arguments, run by the kernel *as that tool*
 * (`ToolDef.sameAs`): the same validation, policy, limits, journal and
 * audit as a direct call).
 */
import { z } from 'zod';
import { defineTool, failure, type AnyToolDef, type Effect } from '../../kernel/index.js';

export interface CatalogEntry {
  /** Published name. */
  name: string;
  /** The upstream's own tool name. */
  upstreamTool: string;
  description: string;
  effect: Effect;
}

const words = (text: string) => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** BM25 (k1 1.2, b 0.75) over each entry's name (twice: names weigh more) and description. */
export function searchCatalog(entries: readonly CatalogEntry[], query: string, limit: number) {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return entries.slice(0, limit);
  const docs = entries.map((e) => {
    const tokens = [...words(e.upstreamTool), ...words(e.upstreamTool), ...words(e.description)];
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { entry: e, tf, length: tokens.length };
  });
  const avg = docs.reduce((n, d) => n + d.length, 0) / Math.max(docs.length, 1);
  const idf = new Map(
    terms.map((t) => {
      const n = docs.filter((d) => d.tf.has(t)).length;
      return [t, Math.log(1 + (docs.length - n + 0.5) / (n + 0.5))];
    }),
  );
  return docs
    .map((d) => {
      let score = 0;
      for (const t of terms) {
        const f = d.tf.get(t) ?? 0;
        if (f === 0) continue;
        score += (idf.get(t)! * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.length) / avg));
      }
      // An exact name is always first.
      if (query.trim() === d.entry.name || query.trim() === d.entry.upstreamTool) score += 1e6;
      return { entry: d.entry, score };
    })
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((r) => r.entry);
}

const SEARCH_LIMIT = 20;

/** The two tools of a mount's compact form; `entries` is read at each call. */
export function compactTools(spec: {
  upstream: string;
  searchName: string;
  callName: string;
  entries: () => readonly CatalogEntry[];
}): AnyToolDef[] {
  const { upstream, callName } = spec;
  const search = defineTool({
    name: spec.searchName,
    description: `Finds tools of the MCP server '${upstream}' (it has too many to list): a query in words → the best matching tools' names, descriptions and effects. Then call one with ${callName}.`,
    input: z
      .object({
        query: z.string().max(1000),
        limit: z.number().int().min(1).max(100).optional(),
      })
      .strict(),
    effect: 'read',
    handler: async ({ query, limit }) => {
      const tools = searchCatalog(spec.entries(), query, limit ?? SEARCH_LIMIT).map((e) => ({
        name: e.name,
        description: e.description,
        effect: e.effect,
      }));
      // Shown as an MCP result, as the upstream's own tools are.
      return {
        content: [{ type: 'text', text: JSON.stringify({ tools }) }],
        structuredContent: { tools },
      };
    },
  });
  const call = defineTool({
    name: callName,
    description: `Calls a tool of the MCP server '${upstream}' by the name ${spec.searchName} gave, with its arguments; it is checked, decided and journaled exactly as a direct call of that tool.`,
    input: z
      .object({
        name: z.string().max(200),
        arguments: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    effect: 'read',
    sameAs: (args) => {
      const a = args as { name?: unknown; arguments?: unknown };
      if (typeof a?.name !== 'string') return null;
      const found = spec.entries().find((e) => e.name === a.name || e.upstreamTool === a.name);
      return found ? { tool: found.name, args: a.arguments ?? {} } : null;
    },
    // Reached only for a name that is no tool of this upstream.
    handler: async ({ name }) =>
      failure(
        'notFound',
        `No tool '${name}' on the MCP server '${upstream}'; find one with ${spec.searchName}, then call it by the name it gives.`,
      ),
  });
  return [search, call];
}
