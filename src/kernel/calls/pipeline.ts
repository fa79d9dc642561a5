/**
 * The one closed, ordered pipeline every tool call of every door passes.
 *
 * | stage    | module        | error it can raise                                   |
 * |----------|---------------|------------------------------------------------------|
 * | validate | validate.ts   | malformedRequest (wrong type, unknown/missing field) |
 * | replay   | journal.ts    | — (an operation this agent committed answers its     |
 * |          |               |   receipt), malformedRequest (operationID reused)    |
 * | policy   | decide.ts     | notAuthorized (deny, readOnly), busy (rate),         |
 * |          |               | approvalRequired / approvalDenied (ask)              |
 * | limits   | limits.ts     | requestTooLarge, busy (before); timeout,             |
 * |          |               | mutationUncertain, resultTooLarge (after)            |
 * | consent  | consent.ts    | notAuthorized (no grant for the capability)          |
 * | journal  | journal.ts    | malformedRequest (operationID reused), busy,         |
 * |          |               | mutationUncertain (earlier attempt uncertain)        |
 * | execute  | the door      | any code the door returns; a throw → internal        |
 * | history  | history.ts    | (the handler applies ops through the kernel history) |
 * | audit    | audit.ts      | — (every non-read call, every refusal, and every     |
 * |          |               |   call of a tool with auditEveryCall)                |
 * | events   | events.ts     | — (publishes `toolCalled`)                           |
 *
 * Before the first stage, `kernel.call` runs a call that is another tool's
 * (`ToolDef.sameAs`) as that tool, so every stage sees the one capability.
 */
import { AirlockError, failure, internalFailure, isFailure, type Failure } from '../errors.js';
import { callDigest } from '../digest.js';
import { validateInput } from './validate.js';
import { effectOf } from './effect.js';
import { decideCall } from '../authority/decide.js';
import type { PolicyVerdict } from '../authority/policy.js';
import {
  checkRequestBytes,
  checkResponseBytes,
  checkResultTokens,
  checkResultNesting,
  type ConcurrencyGate,
} from './limits.js';
import {
  resultCharsOf,
  type AnyToolDef,
  type Effect,
  type Limits,
  type ToolContext,
} from '../tool.js';
import { agentKeyOf, connectionLabel, type Connection } from '../connection.js';
import { journalKey, OperationRaced, type OpenOperation } from '../writes/journal.js';
import type { AuditEntry, Grant, Provenance, ResourceRef } from '../records.js';
import type { AuditRecord } from '../audit/audit.js';
import type { KernelServices } from '../kernel.js';
import type { CallStage, CallSummary } from './observe.js';

export interface CallOptions {
  connection: Connection;
  /** Aborted when the client cancels the request. */
  signal?: AbortSignal;
  /** Sends MCP progress when the request carried a progress token. */
  progress?: (progress: number, total?: number, message?: string) => Promise<void>;
}

export type CallOutcome = { ok: true; value: unknown } | Failure;

/** What a call needs of its mount and tool; the kernel builds one per tool, once. */
export interface CallScope {
  door: string;
  /** Grant/journal scope: the door's mount. */
  mount: string;
  tool: AnyToolDef;
  limits: Limits;
  gate: ConcurrencyGate;
  resources?: ((capability: string) => Promise<ResourceRef[]>) | undefined;
}

export async function runPipeline(
  services: KernelServices,
  scope: CallScope,
  givenArgs: unknown,
  options: CallOptions,
): Promise<CallOutcome> {
  const started = Date.now();
  // Absent arguments are the empty object (MCP's `arguments` is optional), for
  // every stage alike: validation, and the audit digest of a refused call.
  const rawArgs = givenArgs ?? {};
  const { tool, limits, mount } = scope;
  const { connection } = options;
  // The observer (observe.ts), when one is set, hears each stage's time; none: no marks.
  const observed = services.observer?.begin(mount, tool.name, connection) ?? null;
  let mark = observed ? performance.now() : 0;
  const stageDone = (stage: CallStage, detail?: { decision?: string; rule?: string }) => {
    if (!observed) return;
    const now = performance.now();
    observed.stage(stage, mark, now, detail);
    mark = now;
  };
  let provenance: Provenance | null = null;
  // The effect of this call, once its input validated; a refused call is audited anyway.
  let effect: Effect | null = null;
  // The policy's verdict, once decided; every decision a rule made is audited.
  let verdict: PolicyVerdict | null = null;

  const auditRecord = (result: string): AuditRecord => ({
    connection: connection.id,
    door: mount,
    tool: tool.name,
    args: rawArgs,
    provenance,
    result,
    durationMs: Date.now() - started,
    decision: verdict?.decision ?? null,
    rule: verdict?.rule ?? null,
  });
  // A successful write's entry commits inside the write's own transaction (ctx.write).
  const audited: CallAudit = { record: () => auditRecord('ok'), entry: null };

  const finish = async (outcome: CallOutcome): Promise<CallOutcome> => {
    if (observed) mark = performance.now();
    const auditing = auditStage(services, tool, outcome, effect, verdict, audited, auditRecord);
    if (auditing) await auditing;
    // On demand (kernel §9): built, logged and delivered only while a listener wants it.
    if (services.events.wants('toolCalled'))
      publishCalled(services, mount, tool.name, connection, outcome, started);
    if (observed) {
      stageDone('audit');
      observed.end(summaryOf(mount, tool.name, effect, verdict, outcome, started));
    }
    return outcome;
  };

  // validate + limits (before)
  const tooLarge = checkRequestBytes(rawArgs, limits.requestBytes);
  if (tooLarge) return finish(tooLarge);
  const parsed = validateInput(tool.input, rawArgs);
  if (!parsed.ok) return finish(parsed);
  const input = parsed.value;
  try {
    effect = await effectOf(tool, input, connection);
  } catch (error) {
    return finish(threw(services, error, 'tool effect threw'));
  }
  provenance = tool.journal?.provenance?.(input) ?? null;
  stageDone('validate');

  // replay: an operation this agent already committed answers its receipt (or
  // malformedRequest for other arguments) before the policy, so the owner is
  // never asked again about a call that already happened (kernel §6).
  const journalRequest = journalRequestOf(tool, input, mount, connection);
  // A journaled call's grant is asked for beside its replay read, not after
  // it: on a store that gathers reads (PostgreSQL) both go in one round trip.
  // Asked at the call's start either way; unused when the replay answers.
  const grantLookup =
    journalRequest && tool.consent
      ? services.consent.find(connection.id, mount, tool.consent.capability)
      : undefined;
  grantLookup?.catch(() => undefined);
  if (journalRequest) {
    try {
      const replayed = await services.journal.replay(journalRequest);
      if (replayed) return finish(journalAnswer(replayed, limits, effect, tool));
    } catch (error) {
      return finish(threw(services, error, 'journal replay threw'));
    }
  }

  // policy: the owner's rules decide before any limit is spent
  let decidedGrant: Grant | null | undefined;
  try {
    const decided = await decideCall(services, scope, input, connection, effect, grantLookup);
    verdict = decided.verdict;
    decidedGrant = decided.grant;
    stageDone('policy', verdict ? { decision: verdict.decision, rule: verdict.rule } : undefined);
    if (decided.refusal) return finish(decided.refusal);
  } catch (error) {
    if (error instanceof AirlockError) return finish(error.toFailure());
    return finish(threw(services, error, 'policy stage threw'));
  }

  const release = scope.gate.enter(connection.id, limits.concurrentCalls);
  if (!release) return finish(tooManyCalls(limits));

  try {
    // consent
    let grant = null;
    if (tool.consent) {
      // The policy stage already looked it up (notes targets name its project).
      grant =
        decidedGrant !== undefined
          ? decidedGrant
          : await services.consent.find(connection.id, mount, tool.consent.capability);
      stageDone('consent');
      if (!grant) return await finish(noGrant(tool.consent.capability));
    }

    // journal (a call without an operationID runs unjournaled)
    let operation: OpenOperation | null = null;
    if (tool.journal && journalRequest) {
      const begun = await services.journal.begin(
        {
          ...journalRequest,
          tool: tool.name,
          connection: connection.id,
          target: tool.journal.target?.(input) ?? null,
          provenance,
        },
        { atomic: tool.journal.atomic === true, looked: true },
      );
      if ('ok' in begun || begun.kind === 'replay')
        return await finish(journalAnswer(begun, limits, effect ?? 'write', tool));
      operation = begun.operation;
      stageDone('journal');
    }

    // execute, bounded by the timeout and the caller's cancellation
    const run = () =>
      execute(services, scope, input, effect ?? 'write', grant, operation, options, audited);
    const executed = observed ? await observed.handler(run) : await run();
    stageDone('handler');
    return await finish(bounded(executed, limits, effect ?? 'write', tool));
  } finally {
    release();
  }
}

/** The journal's request for a call its tool journals under an operationID; null for any other call. */
function journalRequestOf(
  tool: AnyToolDef,
  input: unknown,
  mount: string,
  connection: Connection,
): { scope: string; operationId: string; digest: string } | null {
  const operationId = tool.journal?.operationId(input) ?? null;
  return tool.journal && operationId !== null
    ? {
        scope: mount,
        operationId: journalKey(connection, operationId),
        digest: callDigest(tool.name, input),
      }
    : null;
}

/** A stage's unexpected throw: logged under a log id, answered `internal`. */
function threw(services: KernelServices, error: unknown, what: string): Failure {
  const internal = internalFailure();
  services.logger.error({ err: error, logId: internal.data?.logId }, what);
  return internal;
}

const tooManyCalls = (limits: Limits) =>
  failure(
    'busy',
    `At most ${limits.concurrentCalls} calls may be in flight per connection; wait for one to finish, then retry.`,
  );

const noGrant = (capability: string) =>
  failure(
    'notAuthorized',
    `This connection has no ${capability} grant; call the request-access tool for ${capability} and wait for the owner to approve.`,
  );

/**
 * The audit stage. A write's entry, committed with it, is announced; a call
 * that changes state, that a rule decided or that failed is recorded now; a
 * read of an `auditEveryCall` tool that passed by default goes to the tail.
 * Answers what the caller waits for, if anything.
 */
function auditStage(
  services: KernelServices,
  tool: AnyToolDef,
  outcome: CallOutcome,
  effect: Effect | null,
  verdict: PolicyVerdict | null,
  audited: CallAudit,
  auditRecord: (result: string) => AuditRecord,
): Promise<unknown> | null {
  const changesState = effect !== 'read';
  const ruled = verdict !== null && !verdict.rule.startsWith('default:');
  const required = changesState || ruled || !outcome.ok;
  if (outcome.ok && audited.entry) services.audit.announce(audited.entry);
  else if (required) {
    return services.audit
      .record(auditRecord(outcome.ok ? 'ok' : outcome.code))
      .catch((error) => services.logger.error({ err: error }, 'audit write failed'));
  } else if (tool.auditEveryCall === true) {
    // A read that passed by default goes to the audit tail (audit.ts): written
    // with the others of the next few ms in one commit; the caller waits only
    // when the tail is full.
    return services.audit.recordLater(auditRecord('ok'));
  }
  return null;
}

/** The events stage: `toolCalled`, published while a listener wants it. */
function publishCalled(
  services: KernelServices,
  mount: string,
  tool: string,
  connection: Connection,
  outcome: CallOutcome,
  started: number,
): void {
  services.events.publish({
    event: 'toolCalled',
    door: mount,
    tool,
    connection: connectionLabel(connection.id),
    ...(connection.agent ? { agent: connection.agent } : {}),
    result: outcome.ok ? 'ok' : outcome.code,
    durationMs: Date.now() - started,
  });
}

/** What the observer hears at a call's end. */
function summaryOf(
  mount: string,
  tool: string,
  effect: Effect | null,
  verdict: PolicyVerdict | null,
  outcome: CallOutcome,
  started: number,
): CallSummary {
  return {
    door: mount,
    tool,
    effect,
    decision: verdict?.decision ?? null,
    rule: verdict?.rule ?? null,
    result: outcome.ok ? 'ok' : outcome.code,
    durationMs: Date.now() - started,
  };
}

/** A journal answer that ends the call: its failure, or the receipt an earlier run committed (bounded as a result). */
function journalAnswer(
  answer: Failure | { kind: 'replay'; receipt: unknown },
  limits: Limits,
  effect: Effect,
  tool: AnyToolDef,
): CallOutcome {
  return 'ok' in answer
    ? answer
    : bounded({ ok: true, value: answer.receipt }, limits, effect, tool);
}

/**
 * Limits after the call: a result over the response limit (or the nesting
 * cap) is refused, never truncated — before the audit stage, so the refusal
 * the caller gets is the one recorded.
 */
function bounded(
  outcome: CallOutcome,
  limits: Limits,
  effect: Effect,
  tool: AnyToolDef,
): CallOutcome {
  if (!outcome.ok) return outcome;
  const nested = checkResultNesting(outcome.value);
  if (nested) return nested;
  const serialised = JSON.stringify(outcome.value ?? null);
  // A write's result is small and its write is done: only reads are held to
  // the token budget, and not tools whose result is binary (a screenshot).
  const budgeted = effect === 'read' && tool.tokenBudget !== false;
  return (
    checkResponseBytes(serialised, limits.responseBytes) ??
    (budgeted ? checkResultTokens(serialised, limits.resultTokens) : null) ??
    outcome
  );
}

/** The call's audit entry, when its write committed one with it. */
interface CallAudit {
  record(): AuditRecord;
  entry: AuditEntry | null;
}

/** Where a call's write stands, for deciding what an interrupted call may have done. */
interface WriteState {
  state: 'none' | 'writing' | 'committed';
  /** Set once the call has answered; a write started after that is refused. */
  settled: boolean;
}

async function execute(
  services: KernelServices,
  scope: CallScope,
  input: unknown,
  effect: Effect,
  grant: ToolContext['grant'],
  operation: OpenOperation | null,
  options: CallOptions,
  audited: CallAudit,
): Promise<CallOutcome> {
  const { limits } = scope;
  // Cancelled while an earlier stage ran (a door's effect look-up, the policy): nothing ran.
  if (options.signal?.aborted) {
    if (operation) await operation.abandon();
    return failure('cancelled');
  }
  // The handler's signal: aborted by the deadline or the caller (one controller,
  // made when the handler first looks: most calls finish without ever doing so).
  const stop = lazyAbort();
  const write: WriteState = { state: 'none', settled: false };
  const ctx = toolContext(services, scope, {
    grant,
    operation,
    options,
    stop,
    write,
    audited,
  });
  let timer: NodeJS.Timeout | undefined;
  let onCancel: (() => void) | undefined;
  const stopped = new Promise<'timeout' | 'cancelled'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), limits.timeoutMs);
    // The caller's cancellation reaches the handler at once, with the caller's reason.
    onCancel = () => {
      stop.abort(options.signal?.reason);
      resolve('cancelled');
    };
    options.signal?.addEventListener('abort', onCancel, { once: true });
  });
  const handlerRun = runHandler(scope.tool, input, ctx);
  const winner = await Promise.race([handlerRun, stopped]);
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', onCancel!);
  write.settled = true;

  if (winner === 'timeout' || winner === 'cancelled') {
    if (winner === 'timeout') stop.abort(new AirlockError('timeout'));
    return interrupted(winner, scope, input, effect, operation, write, handlerRun);
  }
  return settleJournal(winner, operation, write, ctx);
}

/** An AbortController made on first use; an abort before then is kept and applied when it is made. */
interface LazyAbort {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

function lazyAbort(): LazyAbort {
  let controller: AbortController | undefined;
  let aborted: { reason: unknown } | undefined;
  return {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(aborted.reason);
      }
      return controller.signal;
    },
    abort(reason) {
      aborted ??= { reason };
      controller?.abort(reason);
    },
  };
}

/** The handler's answer as an outcome: a thrown AirlockError is its failure, any other throw `internal`. */
async function runHandler(
  tool: AnyToolDef,
  input: unknown,
  ctx: ToolContext,
): Promise<CallOutcome> {
  try {
    const value = await tool.handler(input, ctx);
    return isFailure(value) ? value : { ok: true, value };
  } catch (error) {
    if (error instanceof AirlockError) return error.toFailure();
    // Another run of this operation committed first; its receipt is the answer.
    if (error instanceof OperationRaced) return error.outcome;
    const internal = internalFailure();
    ctx.logger.error({ err: error, logId: internal.data?.logId }, 'tool handler threw');
    return internal;
  }
}

/**
 * A call stopped by its deadline or its caller: a write that may have
 * happened answers mutationUncertain (kernel §3), never "failed"; the journal
 * entry is abandoned or marked uncertain accordingly.
 */
async function interrupted(
  why: 'timeout' | 'cancelled',
  { tool, limits }: CallScope,
  input: unknown,
  effect: Effect,
  operation: OpenOperation | null,
  write: WriteState,
  handlerRun: Promise<CallOutcome>,
): Promise<CallOutcome> {
  // A tool that says nothing writes exactly when this call's effect is not a read (issue 26).
  const writes =
    tool.writes === undefined
      ? effect !== 'read'
      : typeof tool.writes === 'function'
        ? tool.writes(input)
        : tool.writes;
  const mayHaveWritten = write.state !== 'none' || (writes && !operation);
  if (operation) {
    if (write.state === 'none') await operation.abandon();
    else await operation.markUncertain();
    // Let a write that is already running finish or roll back in the background.
    handlerRun.catch(() => undefined);
  }
  if (write.state === 'committed') {
    // The write finished just before the deadline; its receipt stands.
    const outcome = await handlerRun;
    if (outcome.ok) return outcome;
  }
  if (mayHaveWritten) {
    return failure(
      'mutationUncertain',
      `${tool.name} was interrupted after its write started; check the resource or retry with the same operationID (never a new one).`,
    );
  }
  return why === 'timeout'
    ? failure(
        'timeout',
        `${tool.name} took longer than ${limits.timeoutMs} ms and was stopped; nothing was written, so it is safe to retry.`,
      )
    : failure('cancelled');
}

/** A journaled call that answered without committing leaves no open entry behind. */
async function settleJournal(
  outcome: CallOutcome,
  operation: OpenOperation | null,
  write: WriteState,
  ctx: ToolContext,
): Promise<CallOutcome> {
  if (!operation || write.state === 'committed') return outcome;
  if (outcome.ok) {
    // A journaled handler must write through ctx.write; its result is the receipt.
    await operation.abandon();
    const internal = internalFailure();
    ctx.logger.error({ logId: internal.data?.logId }, 'journaled tool returned without ctx.write');
    return internal;
  }
  if (write.state === 'none') await operation.abandon();
  else await operation.markUncertain();
  return outcome;
}

/** What the handler gets: identity, signal, services, consent requests and the journaled write. */
function toolContext(
  services: KernelServices,
  scope: CallScope,
  call: {
    grant: ToolContext['grant'];
    operation: OpenOperation | null;
    options: CallOptions;
    stop: LazyAbort;
    write: WriteState;
    audited: CallAudit;
  },
): ToolContext {
  const { tool, mount } = scope;
  const { options, operation, write, audited } = call;
  let logger: ToolContext['logger'] | undefined;
  return {
    connection: options.connection,
    door: mount,
    tool: tool.name,
    get signal() {
      return call.stop.signal;
    },
    // The W3C trace context of this call for outbound requests (observe.ts); {} untraced.
    traceContext: () => services.observer?.carrier() ?? {},
    // A child logger only for the handlers that log (most calls never do).
    get logger() {
      return (logger ??= services.logger.child({ door: mount, tool: tool.name }));
    },
    grant: call.grant,
    operation: operation && { id: operation.id, digest: operation.digest },
    store: services.store,
    blobs: services.blobs,
    jobs: services.jobs.seenBy(agentKeyOf(options.connection)),
    events: services.events,
    resultChars: resultCharsOf(scope.limits),
    progress: (p, total, message) => options.progress?.(p, total, message) ?? Promise.resolve(),
    progressRequested: options.progress !== undefined,
    requestConsent: (asked) => {
      // The owner's inbox says which client asks.
      const who = options.connection.client?.name;
      const request = who
        ? {
            ...asked,
            summary: `${who}: ${asked.summary ?? `${asked.capability} access to ${mount}`}`,
          }
        : asked;
      // Only the owner decides (authority.md §2): never a form the client itself can answer.
      return services.consent.request(options.connection.id, mount, request);
    },
    async writeOutside(fn) {
      if (tool.journal?.atomic) {
        throw new Error(`${tool.name} is journaled as atomic but writes outside the store`);
      }
      if (write.settled)
        throw new AirlockError('timeout', 'The call already ended; nothing was sent.');
      write.state = 'writing';
      // A throw leaves the state 'writing': the write may have happened.
      const value = await fn();
      if (isFailure(value)) {
        if (value.data?.mutationUncertain !== true) write.state = 'none';
        return value;
      }
      if (operation) await services.store.transaction((tx) => operation.commit(tx, value));
      write.state = 'committed';
      return value;
    },
    async write(fn) {
      if (write.settled)
        throw new AirlockError('timeout', 'The call already ended; nothing was written.');
      // Its journal entry is inserted by its write: a second write would find it settled.
      if (operation && tool.journal?.atomic && write.state === 'committed')
        throw new Error(`${tool.name} is journaled as atomic but writes twice in one call`);
      write.state = 'writing';
      try {
        // Keyed: a door's write reads what it changes by key (writing-a-door.md).
        let entry: AuditEntry | null = null;
        // Reads answered before this write keep their place in the trail.
        void services.audit.flush();
        const value = await services.store.transaction(
          async (tx) => {
            const result = await fn(tx);
            if (operation) await operation.commit(tx, result);
            // The call's audit entry commits with its first write (not after it,
            // separately); each run of a retried transaction appends its own.
            if (!audited.entry) entry = await services.audit.recordIn(tx, audited.record());
            return result;
          },
          { isolation: 'keyed' },
        );
        if (entry) audited.entry = entry;
        write.state = 'committed';
        return value;
      } catch (error) {
        // The transaction rolled back: nothing was written — by this run. An
        // operation settled by another run (before, or meanwhile) answers
        // with that run's outcome, whatever made this write fail.
        const raced =
          error instanceof OperationRaced
            ? error
            : ((await operation?.settledOutcome().catch(() => null)) ?? null);
        write.state = raced ? 'committed' : 'none';
        throw raced ?? error;
      }
    },
  };
}
