/**
 * An upstream tool's effect (authority.md §3, spec/gateway.md): from its MCP
 * annotations with MCP's own defaults — `readOnlyHint: true` reads;
 * otherwise destructive unless `destructiveHint: false`, which writes — and
 * overridable by the owner per tool, because annotations are the upstream's
 * claim, not a guarantee.
 */
import type { Effect } from '../../kernel/index.js';

export interface UpstreamAnnotations {
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
}

/** The effect the annotations claim. */
export function annotatedEffect(annotations: UpstreamAnnotations | undefined): Effect {
  if (annotations?.readOnlyHint === true) return 'read';
  return annotations?.destructiveHint === false ? 'write' : 'destructive';
}

/** The effect in force: the owner's override when there is one, else the annotations'. */
export function effectFor(
  annotations: UpstreamAnnotations | undefined,
  override: Effect | undefined,
): { effect: Effect; source: 'override' | 'annotations' } {
  return override
    ? { effect: override, source: 'override' }
    : { effect: annotatedEffect(annotations), source: 'annotations' };
}
