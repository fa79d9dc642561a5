/**
 * When telemetry is on (issue 33): off by default; on with the config file's
 * `telemetry` section (`{"telemetry": {"metrics": true}}`), `--metrics-port`,
 * or the standard OpenTelemetry variables — `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (the collector's base URL; `/v1/metrics` is added) or
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as is), `OTEL_METRICS_EXPORTER=none`
 * to keep OTLP off, `OTEL_METRIC_EXPORT_INTERVAL` (ms), `OTEL_SERVICE_NAME`.
 * Traces: on with `{"telemetry": {"traces": true}}`, `OTEL_EXPORTER_OTLP_ENDPOINT`
 * or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_TRACES_EXPORTER=none` keeps
 * them off. `OTEL_SDK_DISABLED=true` turns everything off.
 */
import { z } from 'zod';

export const TelemetryConfigSchema = z
  .object({
    /** Serve `/metrics` (owner-only) and collect metrics. */
    metrics: z.boolean().optional(),
    /** Export traces over OTLP/HTTP (to `otlpEndpoint`, or http://localhost:4318). */
    traces: z.boolean().optional(),
    /** An OTLP/HTTP base URL (like OTEL_EXPORTER_OTLP_ENDPOINT); the variables win. */
    otlpEndpoint: z.string().url().optional(),
  })
  .strict();
export type TelemetryConfig = z.infer<typeof TelemetryConfigSchema>;

export interface MetricsSettings {
  otlpUrl?: string;
  exportIntervalMs?: number;
  serviceName?: string;
}

/** The metrics settings, or null when metrics are off. */
export function metricsSettings(
  env: NodeJS.ProcessEnv,
  config: TelemetryConfig,
  metricsPort: boolean,
): MetricsSettings | null {
  if (env.OTEL_SDK_DISABLED === 'true' && !config.metrics && !metricsPort) return null;
  const base =
    env.OTEL_SDK_DISABLED === 'true'
      ? undefined
      : (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.otlpEndpoint);
  const otlpUrl =
    env.OTEL_METRICS_EXPORTER === 'none'
      ? undefined
      : (env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ??
        (base ? `${base.replace(/\/+$/, '')}/v1/metrics` : undefined));
  if (!otlpUrl && !config.metrics && !metricsPort) return null;
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return {
    ...(otlpUrl ? { otlpUrl } : {}),
    ...(Number.isFinite(interval) && interval > 0 ? { exportIntervalMs: interval } : {}),
    ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}),
  };
}

export interface TracesSettings {
  otlpUrl: string;
  serviceName?: string;
}

/** The traces settings, or null when traces are off (the default). */
export function tracesSettings(
  env: NodeJS.ProcessEnv,
  config: TelemetryConfig,
): TracesSettings | null {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.otlpEndpoint;
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (base || config.traces
      ? `${(base ?? 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`
      : undefined);
  if (!url) return null;
  return { otlpUrl: url, ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}) };
}
