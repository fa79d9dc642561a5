/**
 * The kernel: one object that holds the services (consent, journal, jobs,
 * audit, events) and the mounted doors, and runs every tool call through the
 * pipeline. It knows nothing of HTTP, SQL or any particular door.
 */
import { z } from 'zod';
import { failure } from './errors.js';
import { createConsent, type Consent } from './authority/consent.js';
import { createJournal, type Journal, type Resolution } from './writes/journal.js';
import { createJobRegistry, type JobRegistry } from './jobs.js';
import { createAudit, type Audit, type AuditTailOptions } from './audit/audit.js';
import { createPrincipals, type Principals } from './authority/principals.js';
import { createPolicy, type Policy, type PolicyConfig } from './authority/policy.js';
import { checkRule, type DoorTargets } from './authority/rule-targets.js';
import { createAsks, type Asks } from './authority/asks.js';
import {
  createPresence,
  type Presence,
  type PresenceMode,
  type PresenceVerifier,
} from './authority/presence.js';
import { createConcurrencyGate, type ConcurrencyGate } from './calls/limits.js';
import {
  runPipeline,
  type CallOptions,
  type CallOutcome,
  type CallScope,
} from './calls/pipeline.js';
import { DEFAULT_LIMITS, type AnyToolDef, type Limits } from './tool.js';
import { annotationsOf } from './calls/effect.js';
import type { Door } from './door.js';
import type { EventBus } from './events/events.js';
import type { BlobStore, Store } from './store.js';
import type { Logger } from './logger.js';
import type { JournalEntry } from './records.js';
import { leanOutputSchema, leanSchema } from './calls/lean-schema.js';
import { createRetention, type Retention, type RetentionOptions } from './audit/retention.js';
import type { CallObserver } from './calls/observe.js';

export interface KernelServices {
  readonly store: Store;
  readonly blobs: BlobStore;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly consent: Consent;
  readonly journal: Journal;
  readonly jobs: JobRegistry;
  readonly audit: Audit;
  /** The owner and the agents (authority.md §1). */
  readonly principals: Principals;
  /** The owner's rules for every call (authority.md §3). */
  readonly policy: Policy;
  /** Approvals the policy's `ask` waits for. */
  readonly asks: Asks;
  /** Whether an owner decision needs the owner's presence, and its check (issue 25). */
  readonly presence: Presence;
  /** Told of every call's stages and end (metrics, traces); none by default. */
  readonly observer?: CallObserver | undefined;
}

export interface KernelOptions {
  store: Store;
  blobs: BlobStore;
  events: EventBus;
  logger: Logger;
  /** Limit overrides per door mount (e.g. from the config file). */
  limits?: Record<string, Partial<Limits>>;
  receiptRetentionMs?: number;
  /** What is pruned when (journal, audit); see retention.ts. `journalMs` wins over `receiptRetentionMs`. */
  retention?: RetentionOptions;
  /** A job whose heartbeat is older than this is failed `interrupted` by any instance (default 30 s). */
  jobLeaseMs?: number;
  /** How long a policy ask stays for the owner after its connection ended (default 30 min; `approvals.orphanMinutes`). */
  approvalOrphanMs?: number;
  /** The config file's `policy` section (authority.md §3). */
  policy?: PolicyConfig | undefined;
  /** `owner.presence` and the check of a proof (the composition root injects WebAuthn). */
  presence?: { mode?: PresenceMode | undefined; verifier?: PresenceVerifier | undefined };
  /** The bound of the reads' asynchronous audit tail (audit.ts; 256 entries, 50 ms). */
  auditTail?: AuditTailOptions;
  /** How long `close` waits for in-flight calls (default 5 s). */
  shutdownGraceMs?: number;
  /** Told of every call's stages and end (observe.ts); none by default. */
  observer?: CallObserver | undefined;
  now?: () => number;
}

/** An MCP tool descriptor as `tools/list` publishes it. */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/**
 * `D` is the door type the composition root mounts: the kernel reads only
 * the `Door` part, and hands the same objects back to whoever serves them
 * (the transport reads their surfaces).
 */
export interface Kernel<D extends Door = Door> extends KernelServices {
  mount(door: D): void;
  doors(): D[];
  door(mount: string): D | undefined;
  /**
   * The published descriptors of a mount's tools (its `restOnly` tools left
   * out): the same array (not to be changed) until `refreshTools`, so a
   * transport may share what it derives.
   */
  tools(mount: string): readonly ToolDescriptor[];
  /**
   * Reads a mounted door's `tools` again (a door whose tools come from
   * elsewhere, e.g. an upstream MCP server that changed its list) and
   * publishes `toolsChanged {door}` so transports tell their clients.
   */
  refreshTools(mount: string): void;
  /** The tool a mount offers under that name, if any. */
  tool(mount: string, name: string): AnyToolDef | undefined;
  /** The limits in force for a mount (door defaults, then configuration). */
  limits(mount: string): Limits | undefined;
  /**
   * Runs one tool call through the pipeline. The outcome is a plain value;
   * showing it as MCP content, a RooQi envelope or an HTTP status is the
   * transport's and the door's surfaces' job.
   */
  call(mount: string, tool: string, args: unknown, options: CallOptions): Promise<CallOutcome>;
  /** Recovers jobs, starts doors, then resolves journal entries a previous process left open. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export const mountOf = (door: Door): string => door.mount ?? door.name;

export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return json;
}

/** A tool's descriptor as `tools/list` publishes it. */
function describe(tool: AnyToolDef): ToolDescriptor {
  const d: ToolDescriptor = {
    name: tool.name,
    description: tool.description,
    // A foreign schema (an upstream's, the mcp door) passes through unchanged;
    // our own are published lean.
    inputSchema: tool.inputJsonSchema ?? leanSchema(jsonSchemaOf(tool.input), tool.schemaDepth),
  };
  if (tool.title) d.title = tool.title;
  if (tool.outputJsonSchema) d.outputSchema = tool.outputJsonSchema;
  else if (tool.output) d.outputSchema = leanOutputSchema(jsonSchemaOf(tool.output));
  const annotations = annotationsOf(tool);
  if (annotations) d.annotations = annotations;
  return d;
}

/**
 * The kernel's services over the options' store, bus and logger. The jobs'
 * resume and the policy's rule check ask for the doors mounted at that time.
 */
function createServices(
  options: KernelOptions,
  doorsMounted: () => Iterable<{ door: Door }>,
  doorTargets: () => DoorTargets[],
): { services: KernelServices; retention: Retention } {
  const { store, blobs, events, logger } = options;
  const now = options.now ?? Date.now;
  const orphanMs = options.approvalOrphanMs;
  const consent = createConsent({ store, events, now, ...(orphanMs ? { orphanMs } : {}) });
  const journalMs = options.retention?.journalMs ?? options.receiptRetentionMs;
  const journal = createJournal({
    store,
    now,
    ...(journalMs ? { retentionMs: journalMs } : {}),
  });
  const retention = createRetention({
    store,
    journal,
    logger,
    now,
    ...(options.retention ? { options: options.retention } : {}),
  });
  const jobs = createJobRegistry({
    store,
    events,
    logger,
    now,
    ...(options.jobLeaseMs ? { leaseMs: options.jobLeaseMs } : {}),
    observer: options.observer,
    // A dead instance's job goes to its door, which may resume it.
    resume: (job) => {
      for (const { door } of doorsMounted())
        if (door.name === job.door && door.resumeJob) return door.resumeJob(job);
      return null;
    },
  });
  const audit = createAudit({
    store,
    events,
    now,
    ...(options.auditTail ? { tail: options.auditTail } : {}),
    onTailError: (error, count) =>
      logger.error({ err: error, count }, 'audit write failed: entries of reads lost'),
  });
  const principals = createPrincipals({ store, events, now });
  const policy = createPolicy({
    store,
    events,
    config: options.policy,
    // Rules are checked against the doors mounted when the owner edits them.
    checkRule: (rule, force) => checkRule(rule, doorTargets(), force),
    now,
  });
  const asks = createAsks({ store, events, now, ...(orphanMs ? { orphanMs } : {}) });
  const presence = createPresence({ store, ...options.presence });
  const services: KernelServices = {
    policy,
    asks,
    presence,
    store,
    blobs,
    events,
    logger,
    consent,
    journal,
    jobs,
    audit,
    principals,
    observer: options.observer,
  };
  return { services, retention };
}

export function createKernel<D extends Door = Door>(options: KernelOptions): Kernel<D> {
  const { services, retention } = createServices(
    options,
    () => mounted.values(),
    () => doorTargets(),
  );
  const { events, journal, jobs, audit } = services;
  const mounted = new Map<
    string,
    {
      door: D;
      tools: Map<string, AnyToolDef>;
      /** Per tool, what its calls need (built with the tool list, not per call). */
      scopes: Map<string, CallScope>;
      limits: Limits;
      descriptors: ToolDescriptor[];
    }
  >();
  const gates = new Map<string, ConcurrencyGate>();
  const doorTargets = (): DoorTargets[] =>
    [...mounted].map(([mount, { door }]) => ({
      name: door.name,
      mount,
      targetForms: door.targetForms ?? [],
      tools: door.tools.map((t) => t.name),
    }));
  let closing = false;
  const inFlight = new Set<Promise<unknown>>();

  // A REST route's own tool is called by name through `call`, never offered over MCP.
  const published = (tools: readonly AnyToolDef[]) =>
    tools.filter((t) => t.restOnly !== true).map(describe);

  const scopesOf = (door: D, name: string, limits: Limits): Map<string, CallScope> => {
    const gate = gates.get(name)!;
    const resources = door.resources?.bind(door);
    return new Map(
      door.tools.map((tool) => [
        tool.name,
        { door: door.name, mount: name, tool, limits, gate, resources },
      ]),
    );
  };

  const kernel: Kernel<D> = {
    ...services,
    mount(door) {
      const name = mountOf(door);
      if (mounted.has(name))
        throw new Error(`door mount '${name}' is already in use; give each mount its own prefix`);
      const tools = new Map(door.tools.map((t) => [t.name, t]));
      const limits = { ...DEFAULT_LIMITS, ...door.limits, ...options.limits?.[name] };
      gates.set(name, createConcurrencyGate());
      mounted.set(name, {
        door,
        tools,
        scopes: scopesOf(door, name, limits),
        limits,
        descriptors: published(door.tools),
      });
    },
    doors: () => [...mounted.values()].map((m) => m.door),
    door: (name) => mounted.get(name)?.door,
    tools: (name) => mounted.get(name)?.descriptors ?? [],
    refreshTools(name) {
      const m = mounted.get(name);
      if (!m) throw new Error(`no door mounted as '${name}'`);
      m.tools = new Map(m.door.tools.map((t) => [t.name, t]));
      m.scopes = scopesOf(m.door, name, m.limits);
      m.descriptors = published(m.door.tools);
      events.publish({ event: 'toolsChanged', door: name });
    },

    tool: (name, toolName) => mounted.get(name)?.tools.get(toolName),
    limits: (name) => mounted.get(name)?.limits,

    async call(name, toolName, args, callOptions) {
      const m = mounted.get(name);
      if (!m) throw new Error(`no door mounted as '${name}'`);
      const named = m.scopes.get(toolName);
      // A call that is another tool's is run as that tool (ToolDef.sameAs).
      const same = named?.tool.sameAs?.(args ?? {}) ?? null;
      const scope = same ? (m.scopes.get(same.tool) ?? named) : named;
      if (same && scope !== named) args = same.args;
      if (!scope) {
        const known = [...m.tools.keys()].join(', ');
        return failure(
          'notFound',
          `Unknown tool '${toolName}'; call one of the available tools: ${known}.`,
        );
      }
      if (closing) return failure('unavailable', 'The server is shutting down; retry in a moment.');
      const running = runPipeline(services, scope, args, callOptions);
      inFlight.add(running);
      return running.finally(() => inFlight.delete(running));
    },

    async start() {
      // Doors first: a door resuming a dead instance's job needs the kernel.
      for (const { door } of mounted.values()) await door.start?.(kernel);
      await jobs.recover();
      const byScope = new Map([...mounted].map(([k, v]) => [k, v.door]));
      await journal.resolvePending(async (entry: JournalEntry): Promise<Resolution> => {
        const door = byScope.get(entry.scope);
        // A store-backed write commits with its journal entry: still prepared means not written.
        if (!door?.resolveOperation)
          return entry.state === 'prepared' ? { exists: false } : { exists: 'unknown' };
        return door.resolveOperation(entry);
      });
      await retention.sweep();
      retention.start();
    },

    async close() {
      // Let in-flight calls finish (bounded); a journaled write still open after that
      // stays prepared, and the next start resolves it through the door (kernel §6).
      closing = true;
      await retention.stop();
      await Promise.race([
        Promise.allSettled([...inFlight]),
        new Promise((resolve) => setTimeout(resolve, options.shutdownGraceMs ?? 5000).unref()),
      ]);
      await jobs.close();
      for (const { door } of mounted.values()) await door.stop?.();
      // The reads' audit tail is written before the store may close.
      await audit.flush();
    },
  };
  return kernel;
}
