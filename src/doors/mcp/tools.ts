/**
 * One upstream tool as a kernel tool (spec/gateway.md "Behaviour"): its
 * input and output schemas published unchanged (plus an optional
 * `operationID` for tools that change something), arguments checked against
 * the upstream's schema before anything is forwarded, the effect from the
 * annotations or the owner's override, policy target `NAME:<tool>`, and a
 * preview of the tool and its redacted arguments for an `ask`.
 */
import { z } from 'zod';
import {
  defineTool,
  isFailure,
  redact,
  scrubValue,
  type AnyToolDef,
  type Effect,
  type Limits,
} from '../../kernel/index.js';
import { compileCheck } from './schema-check.js';
import type { Callers } from './upstream/client-requests.js';
import { forwardCall } from './forward.js';
import type { Outcomes } from './outcomes.js';
import type { Tool, Upstream } from './upstream/upstream.js';
import { definitionOf, diffOf, shortDigest, type Definition } from './pinning.js';

export const OPERATION_ID = 'operationID';
/** A write left open is settled this long after its call ended (the kernel has marked it by then). */
const SETTLE_AFTER_MS = 300;

const OPERATION_ID_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description:
    'Optional, added by Airlock: a unique id for this change (e.g. a UUID). Retrying with the same id and arguments returns the first result instead of changing anything twice; after an uncertain answer, retry with the same id, never a new one.',
};

export interface UpstreamToolSpec {
  upstream: Upstream;
  tool: Tool;
  /** The published (prefixed) name. */
  name: string;
  effect: Effect;
  limits: Limits;
  scrub: (text: string) => string;
  /** Audit reads that passed by default too. */
  auditReads: boolean;
  /** Pinning: its definition is not the one the owner reviewed; the ask's card shows what changed. */
  unreviewed?: { diff: unknown; flags: string[] };
  /**
   * Its definition's digest (pinning.ts), the state an ask records: an
   * approved-once call whose tool definition changed since is asked again;
   * `seen` finds an earlier definition by short digest, for the diff.
   */
  definition?: { digest: string; seen: (short: string) => Definition | undefined };
  /** The upstream's calls in flight (client-requests.ts). */
  callers?: Callers;
  /** Where a journaled write's upstream task is kept, and how open writes are settled (outcomes.ts). */
  outcomes?: Outcomes;
}

/** Whether Airlock adds its operationID to this tool (it changes something, and has no field of that name). */
export function takesOperationId(tool: Tool, effect: Effect): boolean {
  return effect !== 'read' && !(OPERATION_ID in (tool.inputSchema.properties ?? {}));
}

/** The input schema `tools/list` publishes: the upstream's, plus operationID for changing tools. */
export function publishedInput(tool: Tool, withOperationId: boolean): Record<string, unknown> {
  const schema = tool.inputSchema as Record<string, unknown>;
  if (!withOperationId) return schema;
  return {
    ...schema,
    properties: { ...(tool.inputSchema.properties ?? {}), [OPERATION_ID]: OPERATION_ID_SCHEMA },
  };
}

export function upstreamTool(spec: UpstreamToolSpec): AnyToolDef {
  const { upstream, tool, effect, scrub } = spec;
  const journaled = takesOperationId(tool, effect);
  const check = compileCheck(tool.inputSchema as Record<string, unknown>);
  const strip = (input: Record<string, unknown>) => {
    if (!journaled) return input;
    const { [OPERATION_ID]: _id, ...rest } = input;
    return rest;
  };
  const input = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (journaled && value[OPERATION_ID] !== undefined) {
      const id = value[OPERATION_ID];
      if (typeof id !== 'string' || id.length === 0 || id.length > 200)
        ctx.addIssue({
          code: 'custom',
          path: [OPERATION_ID],
          message: 'must be a string of 1 to 200 characters (e.g. a UUID)',
          input: id,
        });
    }
    for (const issue of check(strip(value)))
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });
  const target = `${upstream.name}:${tool.name}`;
  const targets = [target] as const;
  const hints = tool.annotations ?? {};
  const namesPath = declaresPath(tool.inputSchema);
  return defineTool({
    name: spec.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description ?? `${tool.name} of the upstream MCP server '${upstream.name}'.`,
    input,
    inputJsonSchema: publishedInput(tool, journaled),
    ...(tool.outputSchema
      ? { outputJsonSchema: tool.outputSchema as Record<string, unknown> }
      : {}),
    effect,
    // A gateway audits everything it forwards, reads included (unless configured not to).
    auditEveryCall: spec.auditReads,
    annotations: {
      ...(hints.title ? { title: hints.title } : {}),
      ...(hints.idempotentHint !== undefined ? { idempotentHint: hints.idempotentHint } : {}),
      ...(hints.openWorldHint !== undefined ? { openWorldHint: hints.openWorldHint } : {}),
    },
    policy: {
      targets: () => targets,
      // The file a "15 minutes" approval may be narrowed to: only a tool whose
      // declared input has a string `path` names one (no guessing from other arguments).
      ...(namesPath
        ? {
            subject: (args: Record<string, unknown>) =>
              typeof args.path === 'string' ? `file ${args.path}` : null,
          }
        : {}),
      ...(spec.definition ? definitionWatch(tool, spec.definition) : {}),
      preview: (args) => ({
        summary: `${upstream.name}: ${tool.name}`,
        upstream: upstream.name,
        tool: tool.name,
        arguments: scrubValue(redact(strip(args)), scrub),
        ...(spec.unreviewed
          ? {
              review: {
                unreviewed: true,
                note: `The definition of ${tool.name} is not the one the owner reviewed; review it on the Upstreams screen (or PUT its effect) to stop asking.`,
                diff: spec.unreviewed.diff,
                ...(spec.unreviewed.flags.length ? { flags: spec.unreviewed.flags } : {}),
              },
            }
          : {}),
      }),
    },
    writes: effect !== 'read',
    ...(journaled
      ? {
          journal: {
            operationId: (args: Record<string, unknown>) =>
              typeof args[OPERATION_ID] === 'string' ? args[OPERATION_ID] : null,
            target: () => target,
          },
        }
      : {}),
    handler: async (args, ctx) => {
      const { outcomes } = spec;
      const operation = ctx.operation?.id;
      let tasked = false;
      const send = () =>
        forwardCall(
          {
            upstream,
            tool: tool.name,
            definition: tool,
            args: strip(args),
            writes: effect !== 'read',
            timeoutMs: spec.limits.timeoutMs + 5_000,
            scrub,
            ...(spec.callers ? { callers: spec.callers } : {}),
            ...(outcomes && operation && effect !== 'read'
              ? {
                  journalTask: (taskId: string) => {
                    tasked = true;
                    return outcomes.keep(operation, tool.name, taskId);
                  },
                }
              : {}),
          },
          ctx,
        );
      if (effect === 'read') return send();
      // A task left open (the upstream died, the call was cut) is settled from the upstream
      // once the kernel has marked it uncertain and the upstream is back.
      const settleLater = () => tasked && outcomes?.soon(SETTLE_AFTER_MS);
      try {
        const out = await ctx.writeOutside(send);
        if (isFailure(out)) settleLater();
        return out;
      } catch (error) {
        settleLater();
        throw error;
      }
    },
  });
}

const DEFINITION = 'definition ';

/**
 * The state an ask of this tool records: its definition's short digest; what
 * changed since an approval: the diff from the definition the owner saw (when
 * still known) to this one, as pinning shows it.
 */
function definitionWatch(tool: Tool, def: NonNullable<UpstreamToolSpec['definition']>) {
  const now = shortDigest(def.digest);
  return {
    observes: () => `${DEFINITION}${now}`,
    changedSince: (judged: string) => {
      const before = judged.startsWith(DEFINITION)
        ? def.seen(judged.slice(DEFINITION.length))
        : undefined;
      return {
        definition: before
          ? diffOf(before, definitionOf(tool))
          : { note: 'The definition the owner saw is no longer known (Airlock restarted).' },
      };
    },
  };
}

/** Whether an upstream tool's input schema declares a top-level string `path` (the file it acts on). */
function declaresPath(schema: unknown): boolean {
  const props = (schema as { properties?: Record<string, unknown> } | null)?.properties;
  const path = props && Object.hasOwn(props, 'path') ? props.path : undefined;
  return (path as { type?: unknown } | undefined)?.type === 'string';
}
