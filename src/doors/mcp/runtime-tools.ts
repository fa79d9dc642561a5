/**
 * An upstream's tools as the gateway publishes them (gateway.ts): listed from
 * its client with every configured secret scrubbed, then given their
 * published names, the views the owner sees, the definitions the kernel
 * serves, and the compact form's catalog.
 */
import type { Client } from '@modelcontextprotocol/client';
import {
  scrubValue,
  type AnyToolDef,
  type Limits,
  type Logger,
  type Scrubber,
} from '../../kernel/index.js';
import { claimName, publishedName } from './naming.js';
import { annotatedEffect, effectFor } from './effects.js';
import { upstreamTool } from './tools.js';
import { compactTools } from './catalog.js';
import {
  definitionOf,
  digestOf,
  flagsOf,
  reviewStateOf,
  shortDigest,
  type Definition,
} from './pinning.js';
import type { Tool } from './upstream/upstream.js';
import type { ToolView, UpstreamRuntime } from './gateway.js';

/**
 * The upstream's tools with every configured secret scrubbed from their
 * metadata (descriptions, titles, schemas, annotations) as they are read,
 * before they are stored or served; a tool whose very name carries a
 * secret is left out (it could not be called by another name).
 */
export async function listTools(client: Client, scrub: Scrubber, logger: Logger): Promise<Tool[]> {
  return cleanTools(await listRaw(client), scrub, logger);
}

export function cleanTools(tools: Tool[], scrub: Scrubber, logger: Logger): Tool[] {
  const clean: Tool[] = [];
  for (const tool of tools) {
    if (scrub(tool.name) !== tool.name) {
      logger.warn({ tool: scrub(tool.name) }, 'a tool name carries a secret; not published');
      continue;
    }
    clean.push({ ...(scrubValue(tool, scrub) as Tool), name: tool.name });
  }
  return clean;
}

async function listRaw(client: Client): Promise<Tool[]> {
  if (!client.getServerCapabilities()?.tools) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor && tools.length < 10_000);
  return tools;
}

/**
 * Sets `rt`'s views, tool definitions, catalog and compact form from its
 * listed tools, claiming their published names from `taken` (shared by all
 * upstreams, in configuration order).
 */
export function publishTools(rt: UpstreamRuntime, taken: Set<string>, limits: () => Limits): void {
  const views: ToolView[] = [];
  const defs: AnyToolDef[] = [];
  for (const tool of rt.listed) {
    const name = claimName(publishedName(rt.name, rt.separator, tool.name), taken);
    const { view, def } = publishedTool(rt, tool, name, limits());
    views.push(view);
    defs.push(def);
  }
  rt.catalog = views.map((v, i) => ({
    name: v.name,
    upstreamTool: v.upstreamTool,
    description: rt.listed[i]!.description ?? '',
    effect: v.effect,
  }));
  const searchName = claimName(publishedName(rt.name, rt.separator, 'search_tools'), taken);
  const callName = claimName(publishedName(rt.name, rt.separator, 'call_tool'), taken);
  rt.compact = [searchName, callName];
  defs.push(
    ...compactTools({ upstream: rt.name, searchName, callName, entries: () => rt.catalog }),
  );
  rt.views = views;
  rt.defs = defs;
}

/** One upstream tool under its published name: what the owner sees and what the kernel serves. */
function publishedTool(
  rt: UpstreamRuntime,
  tool: Tool,
  name: string,
  limits: Limits,
): { view: ToolView; def: AnyToolDef } {
  const chosen = effectFor(tool.annotations, rt.overrides.get(tool.name));
  // Pinned: a definition the owner has not reviewed is served destructive (an ask).
  const state =
    rt.trust === 'pin' && rt.reviews ? reviewStateOf(tool, rt.reviews.get(tool.name)) : null;
  const unreviewed = state && !state.reviewed ? state : null;
  const { effect, source } = unreviewed
    ? { effect: 'destructive' as const, source: 'unreviewed' as const }
    : chosen;
  const flags = flagsOf(tool);
  const digest = digestOf(tool);
  remember(rt.definitions, shortDigest(digest), definitionOf(tool));
  const view: ToolView = {
    name,
    upstreamTool: tool.name,
    effect,
    source,
    annotated: annotatedEffect(tool.annotations),
    ...(state ? { review: unreviewed ? ('unreviewed' as const) : ('reviewed' as const) } : {}),
    ...(flags.length ? { flags } : {}),
    ...(unreviewed ? { diff: unreviewed.diff } : {}),
    ...(state ? { digest } : {}),
    ...(state && rt.reviews?.get(tool.name)
      ? { reviewedAt: rt.reviews.get(tool.name)!.reviewedAt }
      : {}),
  };
  const def = upstreamTool({
    upstream: rt.upstream,
    tool,
    name,
    effect,
    limits,
    scrub: rt.scrub,
    auditReads: rt.auditReads,
    callers: rt.callers,
    outcomes: rt.outcomes,
    definition: { digest, seen: (short) => rt.definitions.get(short) },
    ...(unreviewed ? { unreviewed: { diff: unreviewed.diff, flags } } : {}),
  });
  return { view, def };
}

/** Definitions kept for diffs: the newest DEFINITIONS_KEPT, oldest dropped first. */
const DEFINITIONS_KEPT = 2_000;
function remember(kept: Map<string, Definition>, short: string, definition: Definition) {
  kept.delete(short);
  kept.set(short, definition);
  if (kept.size > DEFINITIONS_KEPT) kept.delete(kept.keys().next().value!);
}
