/**
 * Policy asks (spec/authority.md §3): when the owner's policy says `ask`,
 * the call waits for an approval bound to it exactly — door, tool, agent and
 * the digest of its validated arguments — with a preview the owner judges.
 *
 * The owner approves **once** (that exact call runs once: the retry marks
 * the approval used with a compare-and-set, so two instances cannot both
 * run it), approves **for 15 minutes** (a grant for this rule, agent and
 * target, listed and revocable with the other grants; or narrowed to the
 * call's subject — the same file, note or page — where the door names one),
 * or denies with a
 * reason the agent sees. A denial stands for 15 minutes, so an agent cannot
 * nag; after that the same call asks again.
 */
import { randomUUID } from 'node:crypto';
import { failure, type Failure } from '../errors.js';
import {
  closed,
  goneApproval,
  KEYED,
  ORPHAN_LIFETIME_MS,
  inboxFull,
  isExpired,
  MAX_PENDING_PER_AGENT,
  shown,
  unknownApproval,
  waitingFor,
} from './consent.js';
import type { Approval, ApprovalScope, Grant } from '../records.js';
import type { EventBus } from '../events/events.js';
import { ONE_STATEMENT, type Store } from '../store.js';
import { agentNameOf } from '../connection.js';

/** An approved-once call may run within this long of the approval; a 15-minute approval lasts this long. */
export const ASK_LIFETIME_MS = 15 * 60 * 1000;

/** What the owner sees: a one-line summary and door-made details (secrets redacted). */
export interface Preview {
  summary: string;
  [detail: string]: unknown;
}

export interface AskedCall {
  /**
   * The connection id and its agent's key (connection.ts `agentKey`); calls
   * of no agent (owner, internal) never wait.
   */
  connection: string;
  agent: string | null;
  /** The door's mount. */
  door: string;
  tool: string;
  digest: string;
  /** The call's primary target string (the 15-minute approval covers it), or null. */
  target: string | null;
  /** The rule that asked. */
  rule: string;
  /** What the call acts on in the door's words (CallPolicySpec.subject), kept in the preview; a 15-minute approval may be narrowed to it. */
  subject?: string | null;
  /** The version of the state the call acts on (CallPolicySpec.observes), kept with the ask; read only when the call waits. */
  observe?: () => Promise<string | undefined>;
  /** What changed between two observed versions (CallPolicySpec.changedSince), for the new ask's card. */
  changedSince?: (judged: string, observed: string) => unknown;
  preview: () => Promise<Preview>;
}

export interface Asks {
  /** Null when the call may run now (approved), else the failure to answer. */
  check(call: AskedCall): Promise<Failure | null>;
  /** Approves a policy ask; denials go through `consent.deny`, which decides either kind. */
  approve(id: string, scope: ApprovalScope): Promise<Approval | Failure>;
}

/** The state version an ask kept (its preview's `observed`), if any. */
function observedIn(preview: unknown): string | undefined {
  const v = (preview as { observed?: unknown } | null)?.observed;
  return typeof v === 'string' ? v : undefined;
}

/** The capability a 15-minute approval's grant carries. */
export const askCapability = (rule: string, target: string | null) =>
  `policy:${rule}|${target ?? ''}`;

/** The capability a 15-minute approval narrowed to one subject carries (the subject is URI-encoded, so no `|` inside it). */
export const askSubjectCapability = (rule: string, target: string | null, subject: string) =>
  `${askCapability(rule, target)}|${encodeURIComponent(subject)}`;

/** The subject an ask kept (its preview's `subject`), if any. */
export function subjectIn(preview: unknown): string | undefined {
  const v = (preview as { subject?: unknown } | null)?.subject;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

const agentConnection = (agent: string) => `agent:${agent}`;

/** What `createAsks` works with; its parts take it explicitly. */
interface AsksContext {
  store: Store;
  events: EventBus;
  now: () => number;
  orphanMs: number;
}

const required = (approval: Approval) =>
  failure(
    'approvalRequired',
    `The owner's policy (rule ${approval.rule}) asks before this call: ask the owner to approve request ${approval.id} in the Airlock inbox, then call again with the same arguments.`,
    { approvalID: approval.id, rule: approval.rule },
  );

const denied = (approval: Approval) =>
  failure(
    'approvalDenied',
    `The owner denied this call (request ${approval.id})${approval.reason ? `: ${approval.reason}` : ''}. Do not retry it unless the owner tells you to.`,
    { approvalID: approval.id, rule: approval.rule, reason: approval.reason },
  );

/** Whether a live 15-minute approval (whole rule and target, or narrowed to the call's subject) covers the call. */
async function coveredByGrant(
  { store }: AsksContext,
  call: AskedCall,
  agent: string,
  at: number,
): Promise<boolean> {
  const capability = askCapability(call.rule, call.target);
  const narrowed = call.subject ? askSubjectCapability(call.rule, call.target, call.subject) : null;
  const granted = await store.read(
    (tx) => tx.grants.listActive(at, agentConnection(agent)),
    ONE_STATEMENT,
  );
  return granted.some(
    (g) => g.door === call.door && (g.capability === capability || g.capability === narrowed),
  );
}

/** The pending ask a call files: bound to its door, tool, agent and digest, with the preview the owner judges. */
function pendingAsk(
  call: AskedCall,
  agent: string,
  at: number,
  preview: Preview,
  observed: string | undefined,
  changed: string | null,
  changedSince: unknown,
): Approval {
  return {
    id: randomUUID(),
    kind: 'policy',
    connection: call.connection,
    agent,
    door: call.door,
    capability: 'policy',
    tool: call.tool,
    digest: call.digest,
    target: call.target,
    rule: call.rule,
    preview: {
      ...preview,
      ...(call.subject ? { subject: call.subject } : {}),
      ...(observed !== undefined ? { observed } : {}),
      ...(changed ? { changed } : {}),
      ...(changedSince !== undefined ? { changedSince } : {}),
    },
    scope: null,
    reason: null,
    usedAt: null,
    summary: `${agentNameOf(agent)}: ${preview.summary}`,
    status: 'pending',
    lifetimeMs: ASK_LIFETIME_MS,
    createdAt: at,
    decidedAt: null,
    resource: null,
    grantId: null,
  };
}

/** Null when the call may run now; else the failure to answer, and the ask filed for it if one was. */
async function decideCall(
  { store, orphanMs }: AsksContext,
  call: AskedCall,
  agent: string,
  at: number,
  observed: string | undefined,
  preview: Preview,
): Promise<{ failure: Failure | null; filed?: Approval }> {
  // Keyed: the agent's pending list, read first, is locked until commit
  // (its asks take turns; other agents' run alongside).
  return store.transaction(async (tx) => {
    const waiting = await waitingFor(tx, agent, at, orphanMs);
    let latest = await tx.approvals.latestCall(agent, call.door, call.tool, call.digest);
    if (latest?.status === 'pending' && isExpired(latest, at, orphanMs))
      latest = await tx.approvals.decide(latest.id, closed('expired', at));
    if (latest?.status === 'pending') return { failure: required(latest) };
    if (latest?.status === 'denied' && (latest.decidedAt ?? 0) + ASK_LIFETIME_MS > at)
      return { failure: denied(latest) };
    // What the owner approved may have changed since (another agent or the owner
    // edited it): the approval is spent and the owner judges the call again.
    let changed: string | null = null;
    let changedSince: unknown;
    if (
      latest?.status === 'approved' &&
      latest.scope === 'once' &&
      latest.usedAt === null &&
      (latest.decidedAt ?? 0) + ASK_LIFETIME_MS > at
    ) {
      const judged = observedIn(latest.preview);
      const moved = observed !== undefined && judged !== undefined && judged !== observed;
      if (!(await tx.approvals.markUsed(latest.id, at))) {
        // Another retry used it first: ask afresh.
      } else if (!moved) return { failure: null };
      else {
        changed = `What this call acts on changed after you approved request ${latest.id} (it was ${judged}, it is now ${observed}); nothing ran. Judge it again.`;
        changedSince = call.changedSince?.(judged!, observed!);
      }
    }
    if (waiting.length >= MAX_PENDING_PER_AGENT) return { failure: inboxFull(waiting) };
    const approval = pendingAsk(call, agent, at, preview, observed, changed, changedSince);
    await tx.approvals.insert(approval);
    const asked = required(approval);
    return {
      failure: changed
        ? { ...asked, message: `${changed} ${asked.message}`, data: { ...asked.data, changed } }
        : asked,
      filed: approval,
    };
  }, KEYED);
}

async function checkCall(ctx: AsksContext, call: AskedCall): Promise<Failure | null> {
  const { agent } = call;
  if (agent === null) return null;
  const at = ctx.now();
  if (await coveredByGrant(ctx, call, agent, at)) return null;
  const observed = await call.observe?.();
  const preview = await call.preview();
  const outcome = await decideCall(ctx, call, agent, at, observed, preview);
  if (outcome.filed)
    ctx.events.publish({ event: 'approvalRequested', approval: shown(outcome.filed) });
  return outcome.failure;
}

/** The grant a 15-minute approval makes: the rule and target for this agent, or narrowed to the call's subject. */
function approvalGrant(
  approval: Approval,
  agent: string,
  scope: ApprovalScope,
  subject: string | undefined,
  at: number,
): Grant {
  return {
    id: randomUUID(),
    connection: agentConnection(agent),
    door: approval.door,
    capability:
      scope === '15m-subject' && subject
        ? askSubjectCapability(approval.rule ?? '', approval.target, subject)
        : askCapability(approval.rule ?? '', approval.target),
    resource: null,
    createdAt: at,
    expiresAt: at + ASK_LIFETIME_MS,
    revokedAt: null,
  };
}

async function approveAsk(
  { store, events, now, orphanMs }: AsksContext,
  id: string,
  scope: ApprovalScope,
): Promise<Approval | Failure> {
  const result = await store.transaction(async (tx) => {
    const approval = await tx.approvals.get(id);
    if (!approval) return unknownApproval(id);
    if (approval.status !== 'pending' && approval.kind === 'policy') return goneApproval(approval);
    if (approval.kind !== 'policy')
      return failure(
        'malformedRequest',
        `Approval ${id} is a consent request; approve it with the resource (project) it covers, not a scope.`,
      );
    const at = now();
    if (approval.status === 'pending' && isExpired(approval, at, orphanMs)) {
      const gone = await tx.approvals.decide(id, closed('expired', at));
      return goneApproval(gone ?? { ...approval, status: 'expired' });
    }
    if (approval.status !== 'pending') return goneApproval(approval);
    let grantId: string | null = null;
    const subject = subjectIn(approval.preview);
    if (scope === '15m-subject' && !subject)
      return failure(
        'malformedRequest',
        `Request ${id} names no single file, note or page to narrow to; approve it with {"scope": "once"} or {"scope": "15m"}.`,
      );
    const { agent } = approval;
    if ((scope === '15m' || scope === '15m-subject') && agent) {
      const grant = approvalGrant(approval, agent, scope, subject, at);
      await tx.grants.insert(grant);
      grantId = grant.id;
    }
    const decided = await tx.approvals.decide(id, {
      status: 'approved',
      decidedAt: at,
      resource: null,
      grantId,
      scope,
    });
    return (
      decided ??
      failure('malformedRequest', `Approval ${id} is no longer pending; nothing changed.`)
    );
  }, KEYED);
  if (!('ok' in result)) events.publish({ event: 'approvalDecided', approval: shown(result) });
  return result;
}

export function createAsks({
  store,
  events,
  now = Date.now,
  orphanMs = ORPHAN_LIFETIME_MS,
}: {
  store: Store;
  events: EventBus;
  now?: () => number;
  /** How long an ask stays after its connection ended (consent.ts). */
  orphanMs?: number;
}): Asks {
  const ctx: AsksContext = { store, events, now, orphanMs };
  return {
    check: (call) => checkCall(ctx, call),
    approve: (id, scope) => approveAsk(ctx, id, scope),
  };
}
