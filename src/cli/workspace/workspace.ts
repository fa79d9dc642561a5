/**
 * Assembles a workspace from options: store, event bus, kernel and doors.
 * Commands open it through command-workspace.ts (`buildWorkspace`).
 */
import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createKernel, mountOf } from '../../kernel/kernel.js';
import { unmatchableRule } from '../../kernel/authority/rule-targets.js';
import type { PolicyRule } from '../../kernel/authority/policy.js';
import { createEventBus } from '../../kernel/events/events.js';
import { storeEventLog } from '../../kernel/events/event-log.js';
import type { Logger } from '../../kernel/logger.js';
import type { Store } from '../../kernel/store.js';
import type { Limits } from '../../kernel/tool.js';
import type { DoorContext, OpenApiMount } from '../../doors/context.js';
import type { ServingKernel, ServedDoor } from '../../transport/surface.js';
import { openStore } from '../../store/open.js';
import { fileFolderStorage } from '../../store/folder-file.js';
import { createStoreFolderStorage } from '../../store/folder-store.js';
import { UsageError } from '../args.js';
import { configPolicy, configPresence, configRetention } from '../config/config-file.js';
import { createPasskeys, type Passkeys } from '../../transport/rest/passkeys.js';
import { removeOwnerTokenFile } from './credentials.js';
import { availableDoors, doorFactory } from './doors.js';
import { createBusTransport } from './bus.js';
import { loadAuditSigner } from './audit-key.js';
import type { AirlockMetrics } from '../../telemetry/metrics.js';
import type { MetricsSettings, TracesSettings } from '../../telemetry/settings.js';
import type { AirlockTracing } from '../../telemetry/tracing.js';

export interface WorkspaceOptions {
  data: string;
  doors: string[];
  /** Doors the caller built itself (the relay's page door over its own Puente), mounted after `doors`. */
  built?: ServedDoor[];
  store?: string | undefined;
  bus?: string | undefined;
  /** Per-door limit overrides (`limits` in the config file). */
  limits?: Record<string, Partial<Limits>> | undefined;
  /** How long a silent instance's jobs stay running (`jobs.leaseMs` in the config file). */
  jobLeaseMs?: number | undefined;
  /** `approvals.orphanMinutes`, in ms. */
  approvalOrphanMs?: number | undefined;
  logger: Logger;
  /** Door options: relay port, openapi mounts, the config file. */
  relayPort?: number;
  openapi?: OpenApiMount[];
  config?: Record<string, unknown>;
  /** Upstream MCP servers from `--upstream` flags (the mcp door). */
  upstreams?: Record<string, unknown> | undefined;
  /** Metrics on (`--metrics-port`, config `telemetry`, OTEL_* variables): telemetry/settings.ts. */
  metrics?: MetricsSettings | null;
  /** Traces on (config `telemetry`, OTEL_* variables): telemetry/settings.ts. */
  traces?: TracesSettings | null;
}

export interface Workspace {
  kernel: ServingKernel;
  /** The owner's passkeys in this store (issue 25); the HTTP server sets their relying party. */
  passkeys: Passkeys;
  /** The absolute data folder. */
  data: string;
  store: Store;
  mounts: string[];
  /** Metrics, when on: `/metrics` serves `prometheus()`. */
  metrics: AirlockMetrics | null;
  /** Traces, when on: the HTTP app opens a server span per MCP request. */
  tracing: AirlockTracing | null;
  close(): Promise<void>;
}

/** The store's deployment id, made once: every instance on one store shares it. */
async function deploymentId(store: Store): Promise<string> {
  return store.transaction(async (tx) => {
    const found = await tx.records.get<{ id: string }>('deployment', 'id');
    if (found) return found.value.id;
    const id = randomUUID();
    await tx.records.put('deployment', 'id', { id });
    return id;
  });
}

export async function openWorkspace(options: WorkspaceOptions): Promise<Workspace> {
  const data = resolve(options.data);
  const policy = configPolicy(options.config);
  const retention = configRetention(options.config, data);
  for (const name of options.doors) {
    if (!doorFactory(name)) {
      const known = availableDoors();
      throw new UsageError(
        `--doors: '${name}' is not available in this build (available: ${known.length ? known.join(', ') : 'none yet'})`,
      );
    }
  }
  mkdirSync(data, { recursive: true });
  const opened = await openStore({
    data,
    ...(options.store ? { store: options.store } : {}),
  });
  // OpenTelemetry is loaded only when metrics or traces are on (start-up time).
  const metrics = options.metrics
    ? (await import('../../telemetry/metrics.js')).createMetrics(options.metrics)
    : null;
  const traced = options.traces ? await import('../../telemetry/tracing.js') : null;
  const tracing = traced && options.traces ? traced.createTracing(options.traces) : null;
  const observer =
    metrics && tracing && traced
      ? traced.bothObservers(metrics.observer, tracing.observer)
      : (metrics?.observer ?? tracing?.observer);
  const timed = metrics ? metrics.timed(opened.store) : opened.store;
  // Each transaction a span under the call it serves (issue 33), timed inside it.
  const store = tracing ? tracing.traced(timed) : timed;
  const { blobs } = opened;
  // One channel per deployment (the store's id): two deployments on one Redis never
  // hear each other's events.
  let transport;
  let events;
  let shared = store.kind === 'postgres';
  try {
    transport = options.bus
      ? await createBusTransport(options.bus, {
          channel: `airlock:events:${await deploymentId(store)}`,
          onError: (err) => options.logger.warn({ err: err.message }, 'event bus trouble'),
        })
      : undefined;
    // Scale-out (a bus, or a shared PostgreSQL store): event ids come from the
    // store's log, one id space on every instance, so Last-Event-ID replays
    // anywhere. One embedded instance keeps its in-memory ring: no store
    // write per event on the call path.
    shared ||= transport !== undefined;
    events = await createEventBus({
      ...(shared ? { log: storeEventLog(store) } : {}),
      ...(transport ? { transport } : {}),
      onError: (err) => options.logger.warn({ err }, 'event delivery failed'),
    });
  } catch (error) {
    // A bus that cannot be reached ends the start (exit 1), releasing the store.
    await store.close();
    throw error;
  }
  // Every process on the store shares its passkeys: a decision needs one here too.
  const passkeys = createPasskeys({ store, onEnrolled: () => removeOwnerTokenFile(data) });
  const kernel = createKernel<ServedDoor>({
    store,
    blobs,
    events,
    logger: options.logger,
    policy,
    presence: { mode: configPresence(options.config), verifier: passkeys },
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.jobLeaseMs ? { jobLeaseMs: options.jobLeaseMs } : {}),
    // The folder's key signs the audit chain's checkpoints and anchor (issue 33).
    retention: { ...retention, auditSigner: loadAuditSigner(data) },
    ...(observer ? { observer } : {}),
    ...(options.approvalOrphanMs ? { approvalOrphanMs: options.approvalOrphanMs } : {}),
  });
  metrics?.watch(kernel);
  // Scale-out: events are stamped by the shared log, so their delivery here has a lag to time.
  if (shared) metrics?.watchBus(events);
  for (const name of options.doors) {
    const ctx: DoorContext = {
      data,
      // Scale-out: door folders (scene projects) live in the store, so every instance serves them.
      storage: shared ? createStoreFolderStorage(store, blobs) : fileFolderStorage,
      logger: options.logger,
      env: process.env,
      relayPort: options.relayPort ?? 19100,
      openapi: options.openapi ?? [],
      config: options.config ?? {},
      ...(options.upstreams ? { upstreams: options.upstreams } : {}),
    };
    let doors;
    try {
      doors = await doorFactory(name)!(ctx);
    } catch (error) {
      // A door's own configuration (e.g. WU_MCP_* for page) is a usage error: exit 2 naming it.
      if (error instanceof Error && error.name === 'ConfigError')
        throw new UsageError(error.message);
      throw error;
    }
    for (const door of doors) kernel.mount(door);
  }
  for (const door of options.built ?? []) kernel.mount(door);
  try {
    checkConfigRules(policy?.rules ?? [], kernel.doors());
    await kernel.start();
  } catch (error) {
    // Refused at start (a library caller lives on): doors, bus and store are released.
    await kernel.close().catch(() => undefined);
    await events.close();
    await store.close();
    throw error;
  }
  return {
    kernel,
    passkeys,
    data,
    store,
    mounts: kernel.doors().map(mountOf),
    metrics,
    tracing,
    async close() {
      await kernel.close();
      await events.close();
      await store.close();
      await metrics?.shutdown();
      await tracing?.shutdown();
    },
  };
}

/**
 * The config file's rules pass the check the owner's edits pass (issue 24):
 * one naming a mounted door that can never match its calls is a usage error,
 * since it would protect nothing while the owner believes it does.
 */
function checkConfigRules(rules: readonly PolicyRule[], doors: readonly ServedDoor[]): void {
  const targets = doors.map((d) => ({
    name: d.name,
    mount: mountOf(d),
    targetForms: d.targetForms ?? [],
    tools: d.tools.map((t) => t.name),
  }));
  rules.forEach((rule, i) => {
    const why = unmatchableRule(rule, targets);
    if (why) throw new UsageError(`--config: policy.rules.${i}: ${why}; fix the rule or remove it`);
  });
}
