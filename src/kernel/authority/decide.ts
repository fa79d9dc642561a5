/**
 * The pipeline's policy stage (spec/authority.md §3): after validation and
 * before limits, the owner's policy decides the call — allow, ask or deny —
 * and a rule's rate is counted. An `ask` runs only with an approval bound to
 * this exact call (asks.ts).
 */
import { failure, type Failure } from '../errors.js';
import { callDigest } from '../digest.js';
import { redact } from '../audit/redact.js';
import type { Preview } from './asks.js';
import type { PolicyVerdict } from './policy.js';
import type { AnyToolDef, Effect } from '../tool.js';
import { agentKeyOf, type Connection } from '../connection.js';
import type { Grant } from '../records.js';
import type { KernelServices } from '../kernel.js';

export interface DecidedCall {
  verdict: PolicyVerdict;
  /** Null when the call may go on. */
  refusal: Failure | null;
  /** For a consent-gated tool, the grant the call would use (the consent stage reuses it). */
  grant?: Grant | null;
}

/**
 * A consent-gated tool's targets (notes: `<capability>:<project>`): the
 * project of the grant the call would use, by name and by id; `<capability>:`
 * alone when there is no grant yet (the consent stage then refuses it).
 */
function consentTargets(capability: string, grant: Grant | null): string[] {
  const resource = grant?.resource;
  if (!resource) return [`${capability}:`];
  return resource.name === resource.id
    ? [`${capability}:${resource.name}`]
    : [`${capability}:${resource.name}`, `${capability}:${resource.id}`];
}

/**
 * What a 15-minute approval of the call covers: its first target when the
 * targets name one thing, the whole set (sorted, joined by `,`) when they are
 * its parts — approving a batch of `remove_node` never covers one that also
 * removes a page.
 */
function approvalTarget(
  targets: readonly string[],
  targetsAre: 'names' | 'parts' = 'names',
): string | null {
  if (targetsAre === 'names' || targets.length <= 1) return targets[0] ?? null;
  return [...new Set(targets)].sort().join(',');
}

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const;

/**
 * A call made of parts is decided part by part and the strictest verdict
 * stands (the first of equals): an `allow` rule on `add_node` never lets a
 * batch that also removes a page through, nor one on `pipeline:tesseract` a
 * pipeline that also runs a step a later rule denies.
 */
function strictest(verdicts: readonly PolicyVerdict[]): PolicyVerdict {
  return verdicts.reduce((a, b) => (STRICTNESS[b.decision] > STRICTNESS[a.decision] ? b : a));
}

export async function decideCall(
  services: Pick<KernelServices, 'policy' | 'asks' | 'consent'>,
  scope: { door: string; mount: string; tool: AnyToolDef },
  input: unknown,
  connection: Connection,
  effect: Effect,
  /** The connection's grant for the tool's capability, when the caller already asked for it. */
  grantLookup?: Promise<Grant | null>,
): Promise<DecidedCall> {
  const { tool, mount } = scope;
  const grant = tool.consent
    ? await (grantLookup ?? services.consent.find(connection.id, mount, tool.consent.capability))
    : undefined;
  const targets = tool.policy?.targets
    ? await tool.policy.targets(input, connection)
    : tool.consent
      ? consentTargets(tool.consent.capability, grant ?? null)
      : [];
  // Rules match the agent's name; rates, asks and grants bind to its key (name and id).
  const agent = agentKeyOf(connection);
  const call = {
    door: scope.door,
    mount,
    tool: tool.name,
    agent: connection.agent ?? null,
    effect,
    targets,
  };
  const verdicts =
    tool.policy?.targetsAre === 'parts' && targets.length > 1
      ? await Promise.all(targets.map((t) => services.policy.decide({ ...call, targets: [t] })))
      : [await services.policy.decide(call)];
  const verdict = strictest(verdicts);
  if (verdict.decision === 'deny') {
    return {
      verdict,
      grant,
      refusal: failure(
        'notAuthorized',
        `The owner's policy denies ${tool.name} (rule ${verdict.rule})${verdict.reason ? `: ${verdict.reason}` : ''}. Do not retry it unless the owner changes the policy.`,
        { rule: verdict.rule, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      ),
    };
  }
  // Every rule that decided a part counts the call against its rate, once.
  const ruled = new Map(verdicts.map((v) => [v.rule, v]));
  for (const v of ruled.values()) {
    const overRate = await services.policy.admit(v, agent);
    if (overRate) return { verdict, grant, refusal: overRate };
  }
  if (verdict.decision === 'allow') return { verdict, grant, refusal: null };
  const own = await tool.policy?.check?.(input, connection);
  if (own) return { verdict, grant, refusal: own };

  const binds = await tool.policy?.binds?.(input, connection);
  const refusal = await services.asks.check({
    connection: connection.id,
    agent,
    door: mount,
    tool: tool.name,
    digest: callDigest(tool.name, binds === undefined ? input : { input, binds }),
    target: approvalTarget(targets, tool.policy?.targetsAre),
    rule: verdict.rule,
    subject: (await tool.policy?.subject?.(input, connection)) ?? null,
    ...(tool.policy?.observes
      ? { observe: async () => tool.policy?.observes?.(input, connection) }
      : {}),
    ...(tool.policy?.changedSince ? { changedSince: tool.policy.changedSince } : {}),
    preview: async (): Promise<Preview> => {
      const base = { tool: tool.name, door: mount, effect, targets: [...targets] };
      const own = await tool.policy?.preview?.(input, connection);
      if (own) return { ...base, ...own };
      return {
        ...base,
        summary: `${tool.name}${targets[0] ? ` on ${targets[0]}` : ''} (${effect})`,
        arguments: redact(input),
      };
    },
  });
  return { verdict, grant, refusal };
}
