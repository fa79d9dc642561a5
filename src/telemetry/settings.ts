/**
 * When telemetry is on (issue 33): off by default; on with the config file's
 * `telemetry` section (`{"telemetry": {"metrics": true}}`), `--metrics-port`,
 * or the standard OpenTelemetry variables — `OTEL_EXPORTER_OTLP_ENDPOINT`
 * (the collector's base URL; `/v1/metrics` is added) or
 * `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as is), `OTEL_METRICS_EXPORTER=none`
 * to keep OTLP off, `OTEL_METRIC_EXPORT_INTERVAL` (ms), `OTEL_SERVICE_NAME`.
 */
import { z } from 'zod';

export const TelemetryConfigSchema = z
  .object({
    /** Serve `/metrics` (owner-only) and collect metrics. */
    metrics: z.boolean().optional(),
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
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? config.otlpEndpoint;
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
