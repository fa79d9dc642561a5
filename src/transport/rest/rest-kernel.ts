/**
 * Kernel REST routes every door relies on (spec/README.md): approvals,
 * grants, audit, jobs. Door routes are added beside them by the HTTP app.
 */
import { z } from 'zod';
import { mountOf, type Kernel } from '../../kernel/kernel.js';
import type { RestRoute } from '../surface.js';
import { failure, isFailure } from '../../kernel/errors.js';
import { shown } from '../../kernel/authority/consent.js';
import { APPROVAL_SCOPES, type ResourceRef } from '../../kernel/records.js';
import { validateInput } from '../../kernel/calls/validate.js';
import { DECISIONS, type Decision } from '../../kernel/authority/policy.js';
import { policyRoutes } from './rest-policy.js';
import { agentActivityRoute } from './rest-agent-activity.js';
import { notifyRoutes } from './rest-notify.js';

const ApproveBody = z
  .object({
    /** Consent requests: the resource (project) the grant covers. */
    resource: z
      .union([z.string().min(1), z.object({ id: z.string(), name: z.string() }), z.null()])
      .optional(),
    /** Policy asks: this exact call once, or this rule, agent and target for 15 minutes. */
    scope: z.enum(APPROVAL_SCOPES).optional(),
  })
  .strict();

const DenyBody = z
  .object({ reason: z.string().max(500, '`reason` is longer than 500 characters').optional() })
  .strict();

async function resolveResource(
  kernel: Kernel,
  door: string,
  capability: string,
  wanted: string | ResourceRef | null | undefined,
) {
  const d = kernel.doors().find((x) => mountOf(x) === door);
  if (!d?.resources)
    return typeof wanted === 'string' ? { id: wanted, name: wanted } : (wanted ?? null);
  const options = await d.resources(capability);
  const key = typeof wanted === 'string' ? wanted : wanted?.id;
  const found = options.find((r) => r.id === key || r.name === key);
  if (!found) {
    const names =
      options.map((r) => `${r.name} (${r.id})`).join(', ') || 'none yet; create one first';
    return {
      ok: false as const,
      message: key
        ? `No ${door} resource '${key}'; choose one of: ${names}.`
        : `Choose a resource to approve: ${names}.`,
    };
  }
  return found;
}

/** Runs an owner action and audits it as the owner (authority.md §3). */
type OwnerAudited = <T>(
  tool: string,
  door: string,
  args: unknown,
  run: () => Promise<T>,
) => Promise<T>;

/** The owner's inbox: pending approvals, approving one (a consent's resource or a policy ask's scope), denying one. */
function approvalRoutes(kernel: Kernel, audited: OwnerAudited): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'approvals',
      summary:
        "Pending approvals, oldest first: notes consent requests (kind `consent`) and the owner's policy asks (kind `policy`, with `tool`, `preview` and the `rule` that asked)",
      handler: async () => ({
        status: 200,
        body: { approvals: (await kernel.consent.pending()).map(shown) },
      }),
    },
    {
      method: 'POST',
      path: 'approvals/{id}/approve',
      summary:
        'Approve a pending request: `{"resource": …}` for consent (the project the grant covers), `{"scope": "once" | "15m"}` for a policy ask',
      // The proof of presence binds the approval's previewed call (its digest), not only its id.
      decides: async ({ params }) => {
        const a = (await kernel.consent.pending()).find((x) => x.id === params.id);
        return a
          ? { kind: a.kind, door: a.door, tool: a.tool, digest: a.digest, target: a.target }
          : { missing: true };
      },
      handler: async ({ params, body }) => {
        const parsed = validateInput(ApproveBody, body ?? {});
        if (!parsed.ok) return parsed;
        const pending = (await kernel.consent.pending()).find((a) => a.id === params.id);
        if (!pending) {
          const r = await kernel.consent.approve(params.id!, null); // reports notFound / already decided
          return 'ok' in r ? r : { status: 200, body: r };
        }
        if (pending.kind === 'policy') {
          if (parsed.value.resource !== undefined)
            return failure(
              'malformedRequest',
              `Approval ${params.id} is a policy ask; send {"scope": "once"} or {"scope": "15m"}, not a resource.`,
            );
          const scope = parsed.value.scope ?? 'once';
          const approved = await audited(
            'approvals.approve',
            pending.door,
            { id: params.id, scope },
            () => kernel.asks.approve(params.id!, scope),
          );
          return 'ok' in approved ? approved : { status: 200, body: shown(approved) };
        }
        if (parsed.value.scope !== undefined)
          return failure(
            'malformedRequest',
            `Approval ${params.id} is a consent request; send {"resource": …} naming the project, not a scope.`,
          );
        const resource = await resolveResource(
          kernel,
          pending.door,
          pending.capability,
          parsed.value.resource,
        );
        if (resource && 'ok' in resource) return failure('malformedRequest', resource.message);
        const approved = await audited(
          'approvals.approve',
          pending.door,
          { id: params.id, resource },
          () => kernel.consent.approve(params.id!, resource),
        );
        return 'ok' in approved ? approved : { status: 200, body: shown(approved) };
      },
    },
    {
      method: 'POST',
      path: 'approvals/{id}/deny',
      summary: 'Deny a pending request; `{"reason": …}` is shown to the agent',
      handler: async ({ params, body }) => {
        const parsed = validateInput(DenyBody, body ?? {});
        if (!parsed.ok) return parsed;
        const { reason } = parsed.value;
        const denied = await audited('approvals.deny', 'airlock', { id: params.id, reason }, () =>
          kernel.consent.deny(params.id!, reason),
        );
        return 'ok' in denied ? denied : { status: 200, body: shown(denied) };
      },
    },
  ];
}

/** Jobs: list, one, cancel a running one. */
function jobRoutes(kernel: Kernel, audited: OwnerAudited): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'jobs',
      summary: 'Jobs, newest first',
      handler: async ({ query }) => ({
        status: 200,
        body: {
          jobs: await kernel.jobs.list({
            ...(query.get('door') ? { door: query.get('door')! } : {}),
            limit: 200,
          }),
        },
      }),
    },
    {
      method: 'GET',
      path: 'jobs/{id}',
      summary: 'One job',
      handler: async ({ params }) => {
        const job = await kernel.jobs.get(params.id!);
        return job
          ? { status: 200, body: job }
          : failure('notFound', `No job ${params.id}; list jobs to see their ids.`);
      },
    },
    {
      method: 'DELETE',
      path: 'jobs/{id}',
      summary: 'Cancel a running job',
      handler: async ({ params }) =>
        (await audited('jobs.cancel', 'airlock', { id: params.id }, () =>
          kernel.jobs.cancel(params.id!),
        ))
          ? { status: 200, body: { cancelled: params.id } }
          : failure('notFound', `No running job ${params.id}; list jobs to see the running ones.`),
    },
  ];
}

export function kernelRoutes(kernel: Kernel): RestRoute[] {
  // Owner actions are audited as the owner (authority.md §3).
  const audited = async <T>(tool: string, door: string, args: unknown, run: () => Promise<T>) => {
    const out = await run();
    // A Failure records its code; `false` (nothing to revoke) records notFound.
    const result = isFailure(out) ? out.code : out === false ? 'notFound' : 'ok';
    await kernel.audit.ownerAction(tool, door, args, result);
    return out;
  };
  return [
    ...approvalRoutes(kernel, audited),
    ...notifyRoutes(kernel),
    {
      method: 'GET',
      path: 'grants',
      summary: 'Active grants',
      handler: async () => ({
        status: 200,
        body: { grants: (await kernel.consent.grants()).map(shown) },
      }),
    },
    {
      method: 'DELETE',
      path: 'grants/{id}',
      summary: 'Revoke a grant',
      handler: async ({ params }) =>
        (await audited('grants.revoke', 'airlock', { id: params.id }, () =>
          kernel.consent.revoke(params.id!),
        ))
          ? { status: 200, body: { revoked: params.id } }
          : failure(
              'notFound',
              `No active grant ${params.id}; list grants to see the active ones.`,
            ),
    },
    ...agentRoutes(kernel, audited),
    ...policyRoutes(kernel, audited),
    {
      method: 'GET',
      path: 'audit',
      summary:
        'Audit trail, oldest first (`?order=desc`: newest first; `?format=jsonl` exports JSON lines; `afterId`, `door`, `decision`, `rule`, `limit`)',
      handler: async ({ query }) => {
        const decision = query.get('decision');
        if (decision !== null && !(DECISIONS as readonly string[]).includes(decision))
          return failure(
            'malformedRequest',
            `\`decision\` must be allow, ask or deny; got ${JSON.stringify(decision)}.`,
          );
        const q = {
          ...(query.get('afterId') ? { afterId: Number(query.get('afterId')) } : {}),
          ...(query.get('door') ? { door: query.get('door')! } : {}),
          ...(decision ? { decision: decision as Decision } : {}),
          ...(query.get('rule') ? { rule: query.get('rule')! } : {}),
          ...(query.get('order') === 'desc' ? { order: 'desc' as const } : {}),
          limit: Math.min(Number(query.get('limit') ?? 1000) || 1000, 10_000),
        };
        if (query.get('format') === 'jsonl') {
          const text = await kernel.audit.exportJsonLines(q);
          return {
            status: 200,
            raw: {
              bytes: Buffer.from(text),
              contentType: 'application/x-ndjson',
              filename: 'audit.jsonl',
            },
          };
        }
        return { status: 200, body: { entries: await kernel.audit.list(q) } };
      },
    },
    ...jobRoutes(kernel, audited),
  ];
}

const AgentBody = z.object({ name: z.string().min(1).max(64) }).strict();

/** The owner's agents (authority.md §1): list, make (the token is in this answer only), revoke. */
function agentRoutes(
  kernel: Kernel,
  audited: <T>(tool: string, door: string, args: unknown, run: () => Promise<T>) => Promise<T>,
): RestRoute[] {
  return [
    {
      method: 'GET',
      path: 'agents',
      summary: 'Agents, with when each was made or revoked (never tokens)',
      handler: async () => ({
        status: 200,
        body: { agents: await kernel.principals.listAgents() },
      }),
    },
    agentActivityRoute(kernel),
    {
      method: 'POST',
      path: 'agents',
      summary: 'Make an agent {name} → {name, token} (the token is shown only here)',
      decides: true,
      handler: async ({ body }) => {
        const parsed = validateInput(AgentBody, body ?? {});
        if (!parsed.ok) return parsed;
        const made = await audited('agents.add', 'airlock', { name: parsed.value.name }, () =>
          kernel.principals.addAgent(parsed.value.name),
        );
        return 'ok' in made ? made : { status: 201, body: made };
      },
    },
    {
      method: 'DELETE',
      path: 'agents/{name}',
      summary: 'Revoke an agent: its token stops working and its sessions end, on every instance',
      decides: true,
      handler: async ({ params }) => {
        const revoked = await audited('agents.revoke', 'airlock', { name: params.name }, () =>
          kernel.principals.revokeAgent(params.name!),
        );
        return 'ok' in revoked ? revoked : { status: 200, body: revoked };
      },
    },
  ];
}
