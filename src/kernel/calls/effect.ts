/**
 * A tool's effect (authority.md §3) and the one place the MCP hints are
 * derived from it: `read` → readOnlyHint true; `write` → readOnlyHint false,
 * destructiveHint false; `destructive` → readOnlyHint false, destructiveHint
 * true. The audit stage and the policy ask `effectOf` for the call at hand.
 */
import type { AnyToolDef, Effect, EffectHint } from '../tool.js';
import type { Connection } from '../connection.js';

/**
 * The effect of one call with its validated input (a door may need to ask
 * its application, e.g. whether a page action asks for confirmation) and,
 * in the pipeline, its connection (whose retry it may be).
 *
 * @example
 * effectOf(callTool, { resource: 'pets', method: 'delete' }); // 'destructive'
 */
export function effectOf(
  tool: AnyToolDef,
  input: unknown,
  connection?: Connection,
): Effect | Promise<Effect> {
  return typeof tool.effect === 'function' ? tool.effect(input, connection) : tool.effect;
}

/** The effect `tools/list` publishes: the declared one, or for a per-call effect the most cautious. */
export function publishedEffectOf(tool: AnyToolDef): Effect {
  return typeof tool.effect === 'function' ? (tool.publishedEffect ?? 'destructive') : tool.effect;
}

const HINTS: Record<Effect, Partial<Record<EffectHint, boolean>>> = {
  read: { readOnlyHint: true },
  write: { readOnlyHint: false, destructiveHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true },
};

/**
 * The annotations a tool's descriptor publishes: the hints its effect
 * implies (those it states), then its own `title`, `idempotentHint` and
 * `openWorldHint`. Undefined when there is nothing to say.
 */
export function annotationsOf(tool: AnyToolDef): Record<string, unknown> | undefined {
  const effect: unknown = publishedEffectOf(tool);
  if (effect !== 'read' && effect !== 'write' && effect !== 'destructive')
    throw new Error(`tool '${tool.name}' declares no effect; give it read, write or destructive`);
  const stated = tool.statedHints;
  const hints = Object.entries(HINTS[effect]).filter(
    ([hint]) => !stated || stated.includes(hint as EffectHint),
  );
  // A hint written among the annotations (untyped callers) never overrides the effect's.
  const own = Object.entries(tool.annotations ?? {}).filter(([key]) => !(key in HINTS.write));
  const annotations = Object.fromEntries([...hints, ...own]);
  return Object.keys(annotations).length > 0 ? annotations : undefined;
}
