/**
 * Forwarding one `tools/call` to its upstream: progress from the upstream
 * reaches the caller, the caller's cancellation (and the kernel's timeout)
 * reaches the upstream as `notifications/cancelled`. What can go wrong is
 * answered in the kernel's vocabulary: an upstream that cannot be reached or
 * dies mid-call → `unavailable` (a write then says `mutationUncertain`); an
 * upstream's protocol error or error result → `upstreamError`.
 */
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { failure, type Failure, type ToolContext } from '../../kernel/index.js';
import type { Upstream } from './upstream/upstream.js';
import { TOO_LARGE_MARK } from './upstream/bounded.js';
import { STREAM_ENDED_MARK } from './upstream/http-bounded.js';
import { takeRequest, type Callers } from './upstream/client-requests.js';
import { callAsTask, taskSupportOf } from './upstream/upstream-tasks.js';
import type { Tool } from './upstream/upstream.js';

/** How long a call waits for an upstream that is starting or restarting. */
export const READY_WAIT_MS = 15_000;

export interface ForwardCall {
  upstream: Upstream;
  /** The upstream's own tool name. */
  tool: string;
  /** Its definition as listed (whether it runs as an upstream task). */
  definition?: Tool;
  /**
   * The call is a journaled write: sent as an upstream task when the tool
   * may run as one, its task id handed here before the call waits
   * (outcomes.ts), so a crash can be settled from the upstream.
   */
  journalTask?: (taskId: string) => Promise<void>;
  args: Record<string, unknown>;
  /** Whether the call may change something (its effect is not `read`). */
  writes: boolean;
  /** Bounds the upstream request; the kernel's own timeout aborts it first. */
  timeoutMs: number;
  scrub: (text: string) => string;
  /** The upstream's calls in flight, so what it asks back reaches this caller only. */
  callers?: Callers;
}

/** The text of an error result's content, for the message. */
function textOf(result: CallToolResult): string {
  const text = result.content
    .map((c) => (c.type === 'text' ? c.text : ''))
    .join(' ')
    .trim();
  return text.length > 500 ? `${text.slice(0, 500)}…` : text || '(no text)';
}

type ForwardContext = Pick<
  ToolContext,
  'signal' | 'progress' | 'progressRequested' | 'traceContext'
> & { readonly connection?: { readonly id: string } };

/**
 * An HTTP upstream that answers 404 to its session has forgotten it (it
 * restarted): the request was not run, so it is sent once more on a new
 * session. One that refuses the connection was not reached: `unavailable`
 * at once, reconnected in the background.
 */
export async function forwardCall(
  call: ForwardCall,
  ctx: ForwardContext,
): Promise<CallToolResult | Failure> {
  const leave = call.callers?.enter({
    connection: ctx.connection?.id ?? '',
    scope: takeRequest(),
    signal: ctx.signal,
  });
  try {
    return await forwardRetrying(call, ctx);
  } finally {
    leave?.();
  }
}

async function forwardRetrying(
  call: ForwardCall,
  ctx: ForwardContext,
): Promise<CallToolResult | Failure> {
  const first = await forwardOnce(call, ctx);
  if (!(first instanceof SessionGone)) return first;
  return forwardOnce(call, ctx).then((again) =>
    again instanceof SessionGone ? failureOf(again.error, call) : again,
  );
}

class SessionGone {
  constructor(readonly error: unknown) {}
}

const statusOf = (error: unknown) =>
  error instanceof SdkError ? (error.data as { status?: unknown } | undefined)?.status : undefined;
/** Nothing reached the upstream: the connection was refused. */
const refused = (error: unknown) =>
  error instanceof TypeError &&
  (error.cause as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';

async function forwardOnce(
  call: ForwardCall,
  ctx: ForwardContext,
): Promise<CallToolResult | Failure | SessionGone> {
  const { upstream, tool, scrub } = call;
  const client = await call.upstream.client(READY_WAIT_MS);
  // Nothing was sent: a plain unavailable, even for a write.
  if ('ok' in client) return client;
  // Progress sent on before the result, so the caller never sees a step after the answer.
  const relayed: Promise<unknown>[] = [];
  try {
    // The upstream joins the caller's trace: W3C trace context in `_meta` (MCP semantic conventions).
    const traced = ctx.traceContext?.() ?? {};
    const params = {
      name: tool,
      arguments: call.args,
      ...(Object.keys(traced).length ? { _meta: traced } : {}),
    };
    const options = {
      signal: ctx.signal,
      timeout: call.timeoutMs,
      // The upstream is asked for progress only when our caller asked for it.
      ...(ctx.progressRequested
        ? {
            onprogress: (p: { progress: number; total?: number; message?: string }) =>
              void relayed.push(
                ctx.progress(p.progress, p.total, p.message).catch(() => undefined),
              ),
          }
        : {}),
    };
    const support = call.definition ? taskSupportOf(client, call.definition) : null;
    const result =
      support === 'required' || (support === 'optional' && call.journalTask)
        ? await callAsTask(client, params, options, call.journalTask ?? (async () => undefined))
        : ((await client.callTool(params, options)) as CallToolResult);
    await Promise.all(relayed);
    if (result.isError)
      return failure(
        'upstreamError',
        scrub(
          `${upstream.name}'s tool ${tool} answered an error: ${textOf(result)} Fix the arguments or the request, then call again.`,
        ),
        { upstream: upstream.name, tool, result },
      );
    return result;
  } catch (error) {
    if (ctx.signal.aborted) throw error; // the kernel answers timeout or cancelled
    // Refused with a 401, the call was not run: unavailable, never uncertain.
    const unauthorized = await upstream.refusedAuthorization(error);
    if (unauthorized) return unauthorized;
    if (statusOf(error) === 404) {
      upstream.lost(client, 'the upstream no longer knows its session (it restarted)');
      return new SessionGone(error);
    }
    if (refused(error)) {
      upstream.lost(
        client,
        `the upstream refused the connection (${String((error as TypeError).cause)})`,
      );
      return failure(
        'unavailable',
        `The upstream '${upstream.name}' is not answering (nothing was sent to it); it is being reconnected. Retry in a few seconds.`,
        { upstream: upstream.name, tool, state: 'restarting' },
      );
    }
    if (error instanceof TypeError && /fetch failed/.test(error.message))
      upstream.lost(client, `the connection to the upstream broke (${String(error.cause)})`);
    const mark =
      error instanceof ProtocolError ? (error.data as { airlock?: unknown })?.airlock : null;
    if (mark === STREAM_ENDED_MARK) {
      upstream.lost(client, 'the upstream closed a call’s stream before answering');
      return stopped(call);
    }
    return failureOf(error, call);
  }
}

/** The upstream stopped while the call ran: a write may or may not have happened. */
function stopped({ upstream, tool, writes }: ForwardCall): Failure {
  const who = `${upstream.name}'s tool ${tool}`;
  return failure(
    'unavailable',
    writes
      ? `The upstream '${upstream.name}' stopped while ${who} ran, so the change may or may not have happened; it is being restarted. Check the result before retrying, and retry with the same operationID (never a new one).`
      : `The upstream '${upstream.name}' stopped while ${who} ran; it is being restarted. Retry in a few seconds.`,
    { upstream: upstream.name, tool, ...(writes ? { mutationUncertain: true } : {}) },
  );
}

/**
 * The SDK client's request funnel rejects with a plain `Error('Not connected')`
 * (no SdkError code) once its transport is gone: an upstream that died
 * while a call was under way (a task's poll sent after the process ended).
 */
const notConnected = (error: unknown) =>
  error instanceof Error && !(error instanceof SdkError) && error.message === 'Not connected';

function failureOf(error: unknown, call: ForwardCall): Failure {
  const { upstream, tool, writes, scrub } = call;
  const who = `${upstream.name}'s tool ${tool}`;
  if (
    (error instanceof SdkError &&
      (error.code === SdkErrorCode.ConnectionClosed ||
        error.code === SdkErrorCode.NotConnected ||
        error.code === SdkErrorCode.SendFailed)) ||
    (error instanceof TypeError && /fetch failed|terminated/.test(error.message)) ||
    notConnected(error)
  )
    return stopped(call);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return failure(
      writes ? 'mutationUncertain' : 'timeout',
      writes
        ? `${who} did not answer in time; the change may have happened. Check, then retry with the same operationID.`
        : `${who} did not answer in time; retry later or ask for less.`,
      { upstream: upstream.name, tool, ...(writes ? { mutationUncertain: true } : {}) },
    );
  const data =
    error instanceof ProtocolError ? (error.data as { airlock?: unknown } | undefined) : undefined;
  if (error instanceof ProtocolError && data?.airlock === TOO_LARGE_MARK)
    return failure(
      'resultTooLarge',
      writes
        ? `${who} ran, but its answer was too large and was discarded (${error.message}); the change may have happened. Check, then retry with the same operationID, asking for less.`
        : `${who} answered too much and its answer was discarded (${error.message}).`,
      { upstream: upstream.name, tool, ...(writes ? { mutationUncertain: true } : {}) },
    );
  if (error instanceof ProtocolError)
    return failure(
      'upstreamError',
      scrub(
        `${who} refused the call (MCP error ${error.code}: ${error.message}). Fix the arguments, then call again.`,
      ),
      { upstream: upstream.name, tool, mcpCode: error.code },
    );
  const message = error instanceof Error ? error.message : String(error);
  return failure(
    'upstreamError',
    scrub(`${who} failed: ${message}. Retry later; if it persists, tell the server operator.`),
    { upstream: upstream.name, tool },
  );
}
