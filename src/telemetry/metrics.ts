/**
 * Airlock's metrics on OpenTelemetry (issue 33; docs/operations.md lists
 * them): a MeterProvider whose readers are the Prometheus serializer behind
 * `/metrics` and, when configured, an OTLP/HTTP exporter. The kernel hears
 * of nothing here: the pipeline tells a `CallObserver` (kernel/calls/observe.ts)
 * of each call; the store is wrapped to time its transactions; pending asks,
 * grants and jobs are read from the kernel when metrics are collected.
 */
import type { Attributes, Meter } from '@opentelemetry/api';
import {
  AggregationType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricReader,
} from '@opentelemetry/sdk-metrics';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { CallObserver, CallStage, ObservedCall } from '../kernel/calls/observe.js';
import type { Store } from '../kernel/store.js';
import type { EventBus } from '../kernel/events/events.js';
import type { Approval, Grant, Job } from '../kernel/records.js';
import type { Door } from '../kernel/door.js';
import { AIRLOCK_VERSION } from '../kernel/version.js';

/** What the collected gauges read (the kernel's services fit). */
export interface MetricSources {
  store: Store;
  consent: { grants(): Promise<Grant[]> };
  jobs: { list(query?: { limit?: number }): Promise<Job[]> };
  /** The mounted doors: those with `status()` report their upstreams. */
  doors?(): readonly Door[];
}

export interface MetricsOptions {
  /** OTLP/HTTP metrics endpoint (`…/v1/metrics`); none: only `/metrics`. */
  otlpUrl?: string | undefined;
  otlpHeaders?: Record<string, string>;
  /** How often OTLP exports (default 60 s, or OTEL_METRIC_EXPORT_INTERVAL). */
  exportIntervalMs?: number;
  serviceName?: string;
}

export interface AirlockMetrics {
  readonly observer: CallObserver;
  /** The store, its transactions and reads timed. */
  timed(store: Store): Store;
  /** Registers the gauges read at collection time. */
  watch(sources: MetricSources): void;
  /**
   * Times each event from the moment the shared log stamped it to its
   * delivery on this instance (scale-out: the bus's lag). Unsubscribes on shutdown.
   */
  watchBus(bus: Pick<EventBus, 'subscribe'>): void;
  /** Where open MCP sessions by protocol era are counted (the HTTP app, once it exists). */
  countSessions(count: () => Record<string, number>): void;
  /** The Prometheus text exposition (format 0.0.4) of every metric now. */
  prometheus(): Promise<string>;
  shutdown(): Promise<void>;
}

/**
 * The doors' upstreams (`Door.status`), read at collection: whether each is
 * up, how often it was restarted, its calls in flight. Door-neutral: any
 * door that reports upstreams shows here.
 */
function watchUpstreams(meter: Meter, doors: () => readonly Door[]): void {
  const up = meter.createObservableGauge('airlock.upstream.up', {
    description:
      '1 when the upstream answers (running), 0 otherwise (starting, restarting, failed…)',
  });
  const restarts = meter.createObservableCounter('airlock.upstream.restarts', {
    description: 'Times the upstream was restarted or reconnected after it stopped',
  });
  const inFlight = meter.createObservableGauge('airlock.upstream.calls_in_flight', {
    description: 'Calls sent to the upstream and not yet answered',
  });
  meter.addBatchObservableCallback(
    (observe) => {
      for (const door of doors()) {
        for (const u of door.status?.().upstreams ?? []) {
          const labels = { door: door.name, upstream: u.name };
          observe.observe(up, u.up ? 1 : 0, labels);
          observe.observe(restarts, u.restarts, labels);
          if (u.inFlight !== undefined) observe.observe(inFlight, u.inFlight, labels);
        }
      }
    },
    [up, restarts, inFlight],
  );
}

/** Seconds buckets from 0.5 ms to 60 s: a tool call spans both ends. */
const SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** The meter provider: the /metrics reader, and OTLP export when it is on. */
function providerOf(options: MetricsOptions, pull: PrometheusExporter): MeterProvider {
  // The exporters bring their own copy of sdk-metrics (a patch apart): same
  // reader contract, separately declared types.
  const readers: MetricReader[] = [pull as unknown as MetricReader];
  if (options.otlpUrl)
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({
          url: options.otlpUrl,
          ...(options.otlpHeaders ? { headers: options.otlpHeaders } : {}),
        }),
        exportIntervalMillis: options.exportIntervalMs ?? 60_000,
      }),
    );
  return new MeterProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName ?? 'airlock',
      'service.version': AIRLOCK_VERSION,
    }),
    readers,
    views: ['*duration*', '*lag*'].map((instrumentName) => ({
      instrumentName,
      aggregation: {
        type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM as const,
        options: { boundaries: SECONDS },
      },
    })),
  });
}

/** The gauges read at collection time: asks, grants, jobs, sessions, upstreams. */
function watchState(
  meter: Meter,
  sources: MetricSources,
  sessionCount: () => Record<string, number>,
): void {
  if (sources.doors) watchUpstreams(meter, sources.doors.bind(sources));
  const asksPending = meter.createObservableGauge('airlock.asks.pending', {
    description: 'Approvals waiting for the owner, by kind (consent, policy)',
  });
  const asksAge = meter.createObservableGauge('airlock.asks.oldest.age', {
    description: 'Age of the oldest approval waiting for the owner, by kind',
    unit: 's',
  });
  const grants = meter.createObservableGauge('airlock.grants.active', {
    description: 'Grants in force',
  });
  const jobs = meter.createObservableGauge('airlock.jobs', {
    description: 'Jobs by state (the newest 1,000)',
  });
  const sessions = meter.createObservableGauge('airlock.sessions', {
    description: 'Open MCP sessions by protocol era',
  });
  meter.addBatchObservableCallback(
    async (observe) => {
      const now = Date.now();
      const [pending, active, recent] = await Promise.all([
        sources.store.read((tx) => tx.approvals.listPending()),
        sources.consent.grants(),
        sources.jobs.list({ limit: 1000 }),
      ]);
      const byKind = new Map<string, Approval[]>([
        ['consent', []],
        ['policy', []],
      ]);
      for (const a of pending) byKind.set(a.kind, [...(byKind.get(a.kind) ?? []), a]);
      for (const [kind, list] of byKind) {
        observe.observe(asksPending, list.length, { kind });
        const oldest = Math.min(...list.map((a) => a.createdAt));
        observe.observe(asksAge, list.length ? (now - oldest) / 1000 : 0, { kind });
      }
      observe.observe(grants, active.length);
      const states = new Map<string, number>(
        ['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => [s, 0]),
      );
      for (const job of recent) states.set(job.status, (states.get(job.status) ?? 0) + 1);
      for (const [state, count] of states) observe.observe(jobs, count, { state });
      for (const [era, count] of Object.entries(sessionCount()))
        observe.observe(sessions, count, { era });
    },
    [asksPending, asksAge, grants, jobs, sessions],
  );
}

export function createMetrics(options: MetricsOptions = {}): AirlockMetrics {
  // The /metrics reader: collected on demand, serialized by the exporter's serializer.
  const pull = new PrometheusExporter({ preventServerStart: true });
  const provider = providerOf(options, pull);
  // Not the global provider: an embedding application keeps its own.
  const meter: Meter = provider.getMeter('airlock', AIRLOCK_VERSION);

  const calls = meter.createCounter('airlock.calls', {
    description:
      'Tool calls by door, tool, effect, policy decision and outcome (ok or the error code)',
  });
  const callDuration = meter.createHistogram('airlock.call.duration', {
    description: 'Tool call duration, from arrival to answer',
    unit: 's',
  });
  const stageDuration = meter.createHistogram('airlock.stage.duration', {
    description:
      'Time spent in each pipeline stage (validate, policy, consent, journal, handler, audit)',
    unit: 's',
  });
  const txDuration = meter.createHistogram('airlock.store.transaction.duration', {
    description: 'Store transaction and read time, queueing included',
    unit: 's',
  });
  const busLag = meter.createHistogram('airlock.event_bus.lag', {
    description: "Time from an event's stamp in the shared log to its delivery on this instance",
    unit: 's',
  });
  const stopWatching: (() => void)[] = [];

  const observer: CallObserver = {
    carrier: () => ({}),
    begin(door): ObservedCall {
      return {
        stage(stage: CallStage, start, end) {
          stageDuration.record((end - start) / 1000, { door, stage });
        },
        handler: (run) => run(),
        end(summary) {
          const attributes: Attributes = {
            door: summary.door,
            tool: summary.tool,
            effect: summary.effect ?? 'unknown',
            decision: summary.decision ?? 'none',
            outcome: summary.result,
          };
          calls.add(1, attributes);
          callDuration.record(summary.durationMs / 1000, {
            door: summary.door,
            outcome: summary.result === 'ok' ? 'ok' : 'error',
          });
        },
      };
    },
  };

  const timed = (store: Store): Store => {
    const time = async <T>(kind: string, run: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      try {
        return await run();
      } finally {
        txDuration.record((performance.now() - start) / 1000, { kind, store: store.kind });
      }
    };
    // The store's other properties (kind, location, a PostgreSQL pool) stay reachable.
    return Object.assign(Object.create(store) as Store, {
      transaction: ((fn, txOptions) =>
        time('transaction', () => store.transaction(fn, txOptions))) as Store['transaction'],
      read: ((fn, readOptions) => time('read', () => store.read(fn, readOptions))) as Store['read'],
      close: () => store.close(),
    });
  };

  let sessionCount: () => Record<string, number> = () => ({});
  const watch = (sources: MetricSources) => watchState(meter, sources, () => sessionCount());

  const serializer = new PrometheusSerializer();
  return {
    observer,
    timed,
    watch,
    countSessions(count) {
      sessionCount = count;
    },
    watchBus(bus) {
      stopWatching.push(
        bus.subscribe(({ at }) => busLag.record(Math.max(0, Date.now() - at) / 1000), {
          onDemand: false,
        }),
      );
    },
    async prometheus() {
      const { resourceMetrics } = await pull.collect();
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => {
      for (const stop of stopWatching.splice(0)) stop();
      return provider.shutdown();
    },
  };
}
