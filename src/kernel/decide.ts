/**
 * The pipeline's policy stage (spec/authority.md §3): after validation and
 * before limits, the owner's policy decides the call — allow, ask or deny —
 * and a rule's rate is counted. An `ask` runs only with an approval bound to
 * this exact call (asks.ts).
 */
import { failure, type Failure } from './errors.js';
import { digestOf } from './digest.js';
import { redact } from './redact.js';
import type { Preview } from './asks.js';
import type { PolicyVerdict } from './policy.js';
import type { AnyToolDef, Effect } from './tool.js';
import type { Connection } from './connection.js';
import type { KernelServices } from './kernel.js';

export interface DecidedCall {
  verdict: PolicyVerdict;
  /** Null when the call may go on. */
  refusal: Failure | null;
}

export async function decideCall(
  services: Pick<KernelServices, 'policy' | 'asks'>,
  scope: { door: string; mount: string; tool: AnyToolDef },
  input: unknown,
  connection: Connection,
  effect: Effect,
): Promise<DecidedCall> {
  const { tool, mount } = scope;
  const targets = (await tool.policy?.targets?.(input, connection)) ?? [];
  const agent = connection.agent ?? null;
  const verdict = await services.policy.decide({
    door: scope.door,
    mount,
    tool: tool.name,
    agent,
    effect,
    targets,
  });
  if (verdict.decision === 'deny') {
    return {
      verdict,
      refusal: failure(
        'notAuthorized',
        `The owner's policy denies ${tool.name} (rule ${verdict.rule})${verdict.reason ? `: ${verdict.reason}` : ''}. Do not retry it unless the owner changes the policy.`,
        { rule: verdict.rule, ...(verdict.reason ? { reason: verdict.reason } : {}) },
      ),
    };
  }
  const overRate = services.policy.admit(verdict, agent);
  if (overRate) return { verdict, refusal: overRate };
  if (verdict.decision === 'allow') return { verdict, refusal: null };

  const refusal = await services.asks.check({
    connection: connection.id,
    agent,
    door: mount,
    tool: tool.name,
    digest: digestOf({ tool: tool.name, input }),
    target: targets[0] ?? null,
    rule: verdict.rule,
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
  return { verdict, refusal };
}
