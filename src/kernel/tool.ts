/**
 * The one way to declare a tool (spec/kernel.md §1).
 *
 * A door declares name, description, input schema (zod), optional output
 * schema, its effect (authority.md §3), the MCP annotations the effect does
 * not say, which kernel stages apply (consent capability, journal) and a
 * handler. The handler receives validated input and a
 * `ToolContext`; it returns a value (the door's result) or a `Failure`.
 *
 * @example
 * const echo = defineTool({
 *   name: 'echo', description: 'Echo text back',
 *   input: z.object({ text: z.string() }).strict(),
 *   effect: 'read',
 *   handler: async ({ text }) => ({ text }),
 * });
 */
import type { z } from 'zod';
import type { Failure } from './errors.js';
import type { Grant, Provenance } from './records.js';
import type { StoreTx } from './store.js';
import type { Logger } from './logger.js';
import type { Connection } from './connection.js';
import type { ConsentRequest } from './authority/consent.js';
import type { Preview } from './authority/asks.js';
import type { JobView } from './jobs.js';
import type { EventBus } from './events/events.js';
import type { BlobStore, Store } from './store.js';

/**
 * What a call does to the world (authority.md §3): `read` changes nothing,
 * `write` changes state that can be changed back, `destructive` may lose
 * something. Audit, policy and the published `readOnlyHint` /
 * `destructiveHint` all follow from it (see effect.ts).
 */
export type Effect = 'read' | 'write' | 'destructive';

/** The MCP hints derived from the effect; a tool never writes them itself. */
export type EffectHint = 'readOnlyHint' | 'destructiveHint';

/** The MCP annotations the effect does not say. */
export interface ToolAnnotations {
  title?: string;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Per-door limits the kernel enforces (spec/kernel.md §3). */
export interface Limits {
  /** UTF-8 bytes of the JSON arguments. */
  requestBytes: number;
  /** UTF-8 bytes of the serialised result. */
  responseBytes: number;
  /** Calls in flight per connection; the extra call is answered `busy` at once. */
  concurrentCalls: number;
  /** Per-call timeout in ms; the handler's signal is aborted. */
  timeoutMs: number;
  /**
   * The token budget of a read's result (issue 17): estimated as the
   * characters a client receives — the JSON text and `structuredContent`,
   * each about the result's JSON — divided by 4. A read over it is refused
   * with `resultTooLarge` saying how to narrow the call; tools that page
   * (`ctx.resultChars`) stay under it by answering a part and a cursor.
   */
  resultTokens: number;
}

export const DEFAULT_LIMITS: Limits = {
  requestBytes: 1024 * 1024,
  responseBytes: 4 * 1024 * 1024,
  concurrentCalls: 16,
  timeoutMs: 60_000,
  resultTokens: 20_000,
};

/** The characters of a result's JSON that fit a token budget (text + structuredContent ≈ 2 × JSON; 4 characters a token). */
export const resultCharsOf = (limits: Pick<Limits, 'resultTokens'>): number =>
  limits.resultTokens * 2;

/**
 * What the owner's policy reads of a call (authority.md §3): the door's
 * target strings, and the preview the owner judges when the policy asks.
 */
export interface CallPolicySpec<I> {
  /**
   * The call's target strings (openapi `plane:pets.delete` and
   * `DELETE /pets/{petId}`, page `<origin>:<action>`, …); the first is the
   * one a 15-minute approval covers.
   */
  targets?: (input: I, connection: Connection) => readonly string[] | Promise<readonly string[]>;
  /**
   * What the targets are: `names` (default) — names of one thing (openapi's
   * two spellings): a rule matching any of them decides, and a 15-minute
   * approval covers the first; `parts` — the parts the call acts on (a
   * batch's op kinds, a pipeline's steps): each part is decided alone and the
   * strictest verdict stands, and a 15-minute approval covers exactly this
   * set, never a call with more.
   */
  targetsAre?: 'names' | 'parts';
  /**
   * The one thing the call acts on, in the door's words ("file /a.txt",
   * "note 3f…", "page https://…"), when the door can name it from the
   * arguments (issue 27). The owner may narrow a 15-minute approval to it:
   * the grant then covers only calls of this agent, rule and target whose
   * subject is the same. Null or absent: the approval cannot be narrowed.
   */
  subject?: (input: I, connection: Connection) => string | null | Promise<string | null>;
  /**
   * The state the call acts on when its arguments do not say it (an undo's
   * `{}`: the step it reverts). An approval binds to it with the arguments,
   * so approving one call never lets a later one act on something else.
   */
  binds?: (input: I, connection: Connection) => unknown;
  /**
   * The state the owner judges (issue 27): a version of what the call acts
   * on (a scene page's content, a note's revision). It is kept with the ask;
   * an approved-once call runs only while it is unchanged, otherwise the
   * owner is asked again and told it changed. Undefined: nothing to watch.
   */
  observes?: (input: I, connection: Connection) => string | undefined | Promise<string | undefined>;
  /**
   * What changed between the state an approval judged and the state now (two
   * `observes` values), for the card of the new ask (e.g. a definition diff);
   * kept in its preview as `changedSince`. Pure and quick: it runs inside the
   * ask's transaction. Absent or undefined: only the "what changed" line.
   */
  changedSince?: (judged: string, observed: string) => unknown;
  /**
   * The door's own checks that refuse a call before the owner is asked (an
   * unconfirmed destructive call, arguments the door rejects), so the owner
   * never judges a call that could not run. Run only when the policy asks.
   */
  check?: (input: I, connection: Connection) => Failure | null | Promise<Failure | null>;
  /** A preview a person can judge, secrets redacted. Default: the tool and its redacted arguments. */
  preview?: (input: I, connection: Connection) => Preview | Promise<Preview>;
}

/** How a tool's write is journaled (spec/kernel.md §6). */
export interface JournalSpec<I> {
  /**
   * The call's operationID; null when the call carries none, which runs it
   * unjournaled (for tools where an operationID is optional).
   */
  operationId: (input: I) => string | null;
  /** Resource key the write touches, so an uncertain entry can be resolved later. */
  target?: (input: I) => string | null;
  provenance?: (input: I) => Provenance | null;
  /**
   * Everything the tool does happens inside its `ctx.write` transaction (no
   * file, blob or upstream is touched outside it), so the journal needs no
   * `prepared` entry before the handler runs: the entry commits with the
   * write, one commit instead of two. The tool calls `ctx.write` once per
   * call. Never for a tool with `writeOutside` or any effect a crash could
   * leave half-done.
   */
  atomic?: boolean;
}

export interface ToolContext {
  readonly connection: Connection;
  readonly door: string;
  readonly tool: string;
  /** Aborted on timeout, cancellation or shutdown. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Report progress; sent as MCP progress when the request carried a token. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * The call's W3C trace context (`traceparent`, `tracestate`) to send with
   * an outbound request — as HTTP headers, or in an MCP request's `_meta` —
   * so the upstream joins the trace; {} when telemetry is off.
   */
  traceContext?(): Record<string, string>;
  /** Whether the request carried a progress token (a door relaying progress asks for it only then). */
  readonly progressRequested: boolean;
  /** The grant the consent stage found (tools with `consent`), else null. */
  readonly grant: Grant | null;
  /** Ask the owner for a grant (the request_*_access tools). */
  requestConsent(request: ConsentRequest): Promise<Grant | Failure>;
  /**
   * Run the tool's write in one store transaction. For journaled tools the
   * journal entry commits in the same transaction, so the write and its
   * receipt exist together or not at all. `receipt` is what a retry with the
   * same operationID gets back.
   */
  write<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /**
   * A write whose effect lives outside the store (an upstream service).
   * `fn` runs outside any transaction with the call marked as writing, so an
   * interruption, a throw, or a returned failure whose data says
   * `mutationUncertain: true` leaves a journaled operation uncertain (never
   * "failed", never re-run under the same operationID). Any other returned
   * failure means nothing was written. A value is committed as the
   * operation's receipt in its own small transaction.
   */
  writeOutside<T>(fn: () => Promise<T | Failure>): Promise<T | Failure>;
  /**
   * The journaled operation this call runs as: its journal key (what
   * `JournalEntry.operationId` holds) and request digest. A door whose write
   * lives outside the store records them with the write, so its
   * `resolveOperation` can find the write after a crash. Null when the call
   * is not journaled.
   */
  readonly operation: { readonly id: string; readonly digest: string } | null;
  readonly store: Store;
  readonly blobs: BlobStore;
  /** The jobs as the caller sees them: an agent starts and finds only its own (authority.md §1). */
  readonly jobs: JobView;
  readonly events: EventBus;
  /** At most this many characters of result JSON fit the door's token budget (`Limits.resultTokens`). */
  readonly resultChars: number;
}

export interface ToolDef<S extends z.ZodType = z.ZodType, R = unknown> {
  name: string;
  title?: string;
  description: string;
  input: S;
  /**
   * The JSON Schema `tools/list` publishes instead of the one derived from
   * `input`, for a door passing a foreign schema through unchanged (the mcp
   * door); `input` must then check the same (e.g. with ajv in a refinement).
   */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * How many objects deep `tools/list` details the input schema; deeper
   * objects are published as `{"type": "object"}` (their description kept).
   * For a tool whose full schema would cost an agent thousands of tokens on
   * every turn (koharu.apply's ops): the description names the deeper shapes
   * and `input` still checks every level, its errors naming the field.
   */
  schemaDepth?: number;
  /** Likewise for `outputSchema` (results then carry `structuredContent` as the door returns them). */
  outputJsonSchema?: Record<string, unknown>;
  /** Published as `outputSchema`; results then also carry `structuredContent`. */
  output?: z.ZodType;
  /**
   * The effect of every call, or of this call decided from its validated
   * input (an openapi GET reads, a DELETE destroys) and the state it acts on
   * (a scene undo: the step it reverts; the connection says whose retry it
   * may be, absent outside a call).
   */
  effect: Effect | ((input: z.output<S>, connection?: Connection) => Effect | Promise<Effect>);
  /**
   * For an `effect` decided per call: the effect `tools/list` publishes, the
   * most cautious a call can have as the door documents it. Default
   * `destructive`.
   */
  publishedEffect?: Effect;
  /**
   * Which derived hints `tools/list` spells out (default: all the effect
   * implies). For reference systems that publish fewer; a left-out hint
   * reads as its MCP default (readOnlyHint false, destructiveHint true), so
   * leaving one out can only make the published promise more cautious.
   */
  statedHints?: readonly EffectHint[];
  annotations?: ToolAnnotations;
  /**
   * Audit every call, reads that passed by default included (a gateway's
   * promise: one trail of everything forwarded). Default: reads that no
   * rule decided and that succeeded are not audited.
   */
  auditEveryCall?: boolean;
  /**
   * true: the kernel entrance of a REST route that has no MCP tool in the
   * door's reference (deleting a Koharu project, an upload): not published
   * in `tools/list` and not callable over MCP, so the seeds' tool lists stay
   * as they are, while the route still passes every stage — policy,
   * `readOnly`, rates, limits, journal, audit — as a call of this tool
   * (issue 24: one entrance). Default false.
   */
  restOnly?: boolean;
  /** Targets and preview for the owner's policy. */
  policy?: CallPolicySpec<z.output<S>>;
  /** Capability a grant must cover before the handler runs (kernel §5). */
  consent?: { capability: string };
  journal?: JournalSpec<z.output<S>>;
  /**
   * True when a timeout after the handler started may leave a write done
   * (→ mutationUncertain); a function decides per call (e.g. GET vs POST).
   * Left out, it follows the call's effect: anything but `read` may have
   * written. Say `false` only for a write-effect tool whose handler cannot
   * have changed anything before it answers.
   */
  writes?: boolean | ((input: z.output<S>) => boolean);
  /**
   * false: the result is not held to the token budget (`Limits.resultTokens`)
   * because it is binary content a client does not read as text (a
   * screenshot); `responseBytes` still bounds it.
   */
  tokenBudget?: false;
  /**
   * One name for one capability: when a call of this tool *is* a call of
   * another tool of the same door (the page door's `wu_execute_action
   * {action: "getState"}` is `wu_get_state`), the other tool and its
   * arguments. The kernel then runs the call as that tool — validated,
   * decided, rated, limited, audited and answered as it — so a rule on the
   * tool cannot be stepped around by the other name. Gets the raw arguments;
   * null for a call that is its own.
   */
  sameAs?: (args: unknown) => { tool: string; args: unknown } | null;
  handler: (input: z.output<S>, ctx: ToolContext) => Promise<R | Failure>;
}

/** Identity function that keeps the input type flowing into the handler. */
export function defineTool<S extends z.ZodType, R>(def: ToolDef<S, R>): ToolDef<S, R> {
  return def;
}

// Erased form for collections of tools with different schemas.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDef = ToolDef<any, any>;
