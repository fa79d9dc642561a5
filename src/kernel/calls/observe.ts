/**
 * What the pipeline tells an observer about each call (issue 33): its
 * stages' times, the policy's decision and how it ended, for metrics and
 * traces. The kernel knows no telemetry library: the composition root may
 * pass an observer (src/telemetry/ implements one on OpenTelemetry); without
 * one the pipeline skips every mark, so an unobserved call costs nothing.
 */
import type { Connection } from '../connection.js';
import type { Effect } from '../tool.js';

/** The pipeline's stages an observer hears of, in order (pipeline.ts). */
export type CallStage = 'validate' | 'policy' | 'consent' | 'journal' | 'handler' | 'audit';

export interface CallSummary {
  door: string;
  tool: string;
  /** Null when the call was refused before its effect was known (invalid input). */
  effect: Effect | null;
  decision: 'allow' | 'ask' | 'deny' | null;
  rule: string | null;
  /** `ok` or the error code the caller got. */
  result: string;
  durationMs: number;
}

/** One observed call. Times are `performance.now()` milliseconds. */
export interface ObservedCall {
  stage(
    stage: CallStage,
    start: number,
    end: number,
    detail?: { decision?: string; rule?: string },
  ): void;
  /** Runs the door's handler inside the call's context (a tracer makes its span current). */
  handler<T>(run: () => Promise<T>): Promise<T>;
  end(summary: CallSummary): void;
}

export interface CallObserver {
  begin(door: string, tool: string, connection: Connection): ObservedCall;
  /**
   * The current call's trace context as W3C headers (`traceparent`,
   * `tracestate`) for a door's outbound request; {} when not traced.
   */
  carrier(): Record<string, string>;
  /**
   * Runs a job's work (kernel §8). Called in the context of the call that
   * started the job, so a tracer can give the run a span of its own linked
   * to that call (a job outlives its call; it is not the call's child).
   */
  job?<T>(info: { door: string; kind: string; id: string }, run: () => Promise<T>): Promise<T>;
}
