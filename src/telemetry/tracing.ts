/**
 * Traces on OpenTelemetry (issue 33), following the MCP semantic
 * conventions (semantic-conventions-genai, docs/gen-ai/mcp.md): one SERVER
 * span per MCP request named `{mcp.method.name} {target}`, with
 * `mcp.method.name`, `mcp.session.id` (an 8-character label),
 * `mcp.protocol.version`, `jsonrpc.request.id`, `gen_ai.tool.name` and
 * `error.type` (`tool_error` when the result is `isError`); the trace
 * context comes from `params._meta.traceparent`/`tracestate`, else the HTTP
 * `traceparent` header. Under it, one span per kernel stage (validate,
 * policy with `airlock.decision` and `airlock.rule`, consent, journal,
 * handler, audit); a door's outbound request carries the handler span's
 * context (`ToolContext.traceContext`). No argument value is ever put in a
 * span.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { CallObserver, ObservedCall } from '../kernel/calls/observe.js';
import { AIRLOCK_VERSION } from '../kernel/version.js';
import type { Store } from '../kernel/store.js';
import type { McpRequestInfo, McpRequestTracer } from '../transport/mcp/mcp-trace.js';

export interface TracingOptions {
  /** OTLP/HTTP traces endpoint (`…/v1/traces`). */
  otlpUrl: string;
  otlpHeaders?: Record<string, string>;
  serviceName?: string;
  /** Export each span at once (tests); default batched. */
  exportAtOnce?: boolean;
}

export interface AirlockTracing {
  readonly requests: McpRequestTracer;
  readonly observer: CallObserver;
  /**
   * The store, its transactions and reads as child spans of the traced work
   * they serve (`db.system`, `db.operation.name`; never a statement or a
   * value). Store work outside a trace (timers, sweeps) makes no span.
   */
  traced(store: Store): Store;
  shutdown(): Promise<void>;
}

/** `performance.now()` milliseconds as epoch milliseconds (what span times take). */
const epoch = (t: number) => performance.timeOrigin + t;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a request's span is named after: the tool, prompt or resource it is about. */
function targetOf(method: string, params: Record<string, unknown>): string | null {
  if (method === 'tools/call' || method === 'prompts/get')
    return typeof params.name === 'string' ? params.name : null;
  if (method.startsWith('resources/') && typeof params.uri === 'string') return params.uri;
  return null;
}

const header = (headers: McpRequestInfo['headers'], name: string) => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** The server span of one MCP request, under the caller's trace (null: not a request). */
function requestSpan(
  tracer: Tracer,
  message: unknown,
  headers: McpRequestInfo['headers'],
  transport: 'tcp' | 'pipe',
): { span: Span; parent: ReturnType<typeof propagation.extract> } | null {
  // Requests only: notifications, responses and batches are not spans of their own.
  if (!isObject(message) || typeof message.method !== 'string' || message.id === undefined)
    return null;
  const method = message.method;
  const params = isObject(message.params) ? message.params : {};
  const meta = isObject(params._meta) ? params._meta : {};
  const carrier: Record<string, string> = {};
  const from = typeof meta.traceparent === 'string' ? meta : null;
  const traceparent = from ? from.traceparent : header(headers, 'traceparent');
  const tracestate = from ? from.tracestate : header(headers, 'tracestate');
  if (typeof traceparent === 'string') carrier.traceparent = traceparent;
  if (typeof tracestate === 'string') carrier.tracestate = tracestate;
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  const target = targetOf(method, params);
  const session = header(headers, 'mcp-session-id');
  const version =
    header(headers, 'mcp-protocol-version') ??
    (typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined);
  const attributes: Attributes = {
    'mcp.method.name': method,
    'jsonrpc.request.id': String(message.id),
    'jsonrpc.protocol.version': '2.0',
    'network.transport': transport,
    ...(transport === 'tcp' ? { 'network.protocol.name': 'http' } : {}),
    ...(session ? { 'mcp.session.id': session.slice(0, 8) } : {}),
    ...(version ? { 'mcp.protocol.version': version } : {}),
    ...(method === 'tools/call' && target
      ? { 'gen_ai.tool.name': target, 'gen_ai.operation.name': 'execute_tool' }
      : {}),
    ...(method === 'prompts/get' && target ? { 'gen_ai.prompt.name': target } : {}),
    ...(method.startsWith('resources/') && target ? { 'mcp.resource.uri': target } : {}),
  };
  const span = tracer.startSpan(
    target ? `${method} ${target}` : method,
    { kind: SpanKind.SERVER, attributes },
    parent,
  );
  return { span, parent };
}

export function createTracing(options: TracingOptions): AirlockTracing {
  const exporter = new OTLPTraceExporter({
    url: options.otlpUrl,
    ...(options.otlpHeaders ? { headers: options.otlpHeaders } : {}),
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      'service.name': options.serviceName ?? 'airlock',
      'service.version': AIRLOCK_VERSION,
    }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, options.exportAtOnce ? { scheduledDelayMillis: 1 } : {}),
    ],
  });
  // The async-local context manager and the W3C propagator: spans follow the
  // call through its awaits, and outbound requests carry `traceparent`.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer: Tracer = provider.getTracer('airlock', AIRLOCK_VERSION);

  const requests: McpRequestTracer = {
    request({ message, headers, res }, handle) {
      const started = requestSpan(tracer, message, headers, 'tcp');
      if (!started) return handle();
      // A streamed answer outlives the handler: the span ends with the response.
      res.once('close', () => started.span.end());
      return context.with(trace.setSpan(started.parent, started.span), handle);
    },
    stdio(message) {
      const started = requestSpan(tracer, message, {}, 'pipe');
      if (!started) return null;
      const active = trace.setSpan(started.parent, started.span);
      return {
        within: (run) => context.with(active, run),
        end: () => started.span.end(),
      };
    },
  };

  const observer: CallObserver = {
    job(info, run) {
      // A job outlives the call that started it: a root span of its own, linked to that call.
      const started = trace.getSpanContext(context.active());
      const span = tracer.startSpan(
        `job ${info.kind}`,
        {
          root: true,
          attributes: { 'airlock.door': info.door, 'airlock.job.id': info.id },
          ...(started ? { links: [{ context: started }] } : {}),
        },
        ROOT_CONTEXT,
      );
      return context.with(trace.setSpan(ROOT_CONTEXT, span), run).finally(() => span.end());
    },
    carrier() {
      const out: Record<string, string> = {};
      propagation.inject(context.active(), out);
      return out;
    },
    begin(door, tool): ObservedCall {
      const active = context.active();
      // Only a span of ours counts: a caller's context alone (remote, not recording) is a parent.
      const current = trace.getSpan(active);
      const server = current?.isRecording() ? current : undefined;
      // A call outside an MCP request (REST, stdio, a job) gets a span of its own.
      const own: Span | null = server
        ? null
        : tracer.startSpan(`call ${tool}`, { attributes: { 'gen_ai.tool.name': tool } }, active);
      const parent = own ? trace.setSpan(active, own) : active;
      const span = own ?? server!;
      span.setAttribute('airlock.door', door);
      return {
        stage(stage, start, end, detail) {
          if (stage === 'handler') return; // a live span (below): the door's requests nest in it
          tracer
            .startSpan(
              stage,
              {
                startTime: epoch(start),
                attributes: {
                  ...(detail?.decision ? { 'airlock.decision': detail.decision } : {}),
                  ...(detail?.rule ? { 'airlock.rule': detail.rule } : {}),
                },
              },
              parent,
            )
            .end(epoch(end));
        },
        handler(run) {
          const handlerSpan = tracer.startSpan(
            'handler',
            { attributes: { 'airlock.door': door } },
            parent,
          );
          return context
            .with(trace.setSpan(parent, handlerSpan), run)
            .finally(() => handlerSpan.end());
        },
        end(summary) {
          span.setAttribute('airlock.result', summary.result);
          if (summary.decision) span.setAttribute('airlock.decision', summary.decision);
          if (summary.rule) span.setAttribute('airlock.rule', summary.rule);
          // A refused or failed call is answered as a tool result with isError.
          if (summary.result !== 'ok') span.setAttribute('error.type', 'tool_error');
          own?.end();
        },
      };
    },
  };

  return {
    requests,
    observer,
    traced: (store) => tracedStore(tracer, store),
    shutdown: () => provider.shutdown(),
  };
}

/** The semantic conventions' `db.system` values of Airlock's stores. */
const DB_SYSTEM: Record<string, string> = { sqlite: 'sqlite', postgres: 'postgresql' };

function tracedStore(tracer: Tracer, store: Store): Store {
  const system = DB_SYSTEM[store.kind] ?? store.kind;
  const span = <T>(operation: string, extra: Attributes, run: () => Promise<T>): Promise<T> => {
    const active = context.active();
    if (!trace.getSpan(active)) return run();
    const child = tracer.startSpan(
      `${operation} ${system}`,
      {
        kind: system === 'sqlite' ? SpanKind.INTERNAL : SpanKind.CLIENT,
        attributes: {
          'db.system': system,
          'db.system.name': system,
          'db.operation.name': operation,
          ...extra,
        },
      },
      active,
    );
    return context.with(trace.setSpan(active, child), run).then(
      (value) => {
        child.end();
        return value;
      },
      (error: unknown) => {
        // The error's kind only: a message may quote a value.
        child.setAttribute('error.type', error instanceof Error ? error.name : 'error');
        child.setStatus({ code: SpanStatusCode.ERROR });
        child.end();
        throw error;
      },
    );
  };
  // The store's other properties (kind, location, a PostgreSQL pool) stay reachable.
  return Object.assign(Object.create(store) as Store, {
    transaction: ((fn, options) =>
      span(
        'transaction',
        options?.isolation ? { 'airlock.store.isolation': options.isolation } : {},
        () => store.transaction(fn, options),
      )) as Store['transaction'],
    read: ((fn, options) =>
      span('read', options?.single ? { 'airlock.store.single': true } : {}, () =>
        store.read(fn, options),
      )) as Store['read'],
    close: () => store.close(),
  });
}

/** One observer that tells both (metrics and traces); the handler runs inside both. */
export function bothObservers(a: CallObserver, b: CallObserver): CallObserver {
  return {
    carrier: () => ({ ...a.carrier(), ...b.carrier() }),
    job(info, run) {
      const inB = b.job ? () => b.job!(info, run) : run;
      return a.job ? a.job(info, inB) : inB();
    },
    begin(door, tool, connection) {
      const x = a.begin(door, tool, connection);
      const y = b.begin(door, tool, connection);
      return {
        stage(stage, start, end, detail) {
          x.stage(stage, start, end, detail);
          y.stage(stage, start, end, detail);
        },
        handler: (run) => x.handler(() => y.handler(run)),
        end(summary) {
          x.end(summary);
          y.end(summary);
        },
      };
    },
  };
}
