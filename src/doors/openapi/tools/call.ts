/**
 * `<prefix>_call {resource, method, args?, limit?, confirm?}`: runs one
 * catalog method. Order of checks (spec/openapi.md): the version probe;
 * the resource and method exist; destructive without `confirm: true` →
 * `confirmRequired`; then the argument checks of `call-args.ts`; then the
 * HTTP request. HTTP errors come back as `isError` with status and body.
 */
import { z } from 'zod';
import {
  defineTool,
  failure,
  isSecretName,
  redact,
  REDACTED,
  type Effect,
} from '../../../kernel/index.js';
import type { Runtime } from '../runtime.js';
import { pretty, type Shown } from '../present.js';
import type { Probe } from '../probe.js';
import { lookup } from './describe.js';
import { checkArgs } from './call-args.js';
import { buildRequest } from '../http/build.js';
import { send, type UpstreamRequest, type UpstreamResponse } from '../http/send.js';
import { DEFAULT_LIMIT, MAX_LIMIT, iterate } from '../http/iterate.js';
import { currentResource } from './current.js';

function hint(status: number, rt: Runtime): string {
  if (status === 401 || status === 403)
    return ' Check the credentials the server is configured with (environment variables); do not retry with the same ones.';
  if (status === 404) return ` Check the ids (${rt.tool('resources')} / list methods find them).`;
  if (status === 400 || status === 422)
    return ` Fix the arguments (${rt.tool('describe')} shows the schema) and call again.`;
  if (status === 429 || status === 503)
    return ' The API is rate limiting or unavailable; wait, then retry.';
  return '';
}

/**
 * The effect of calling one catalog method. The catalog's `kind` already
 * follows the method and its name (compile/naming.ts `kindOf`); the HTTP
 * method is checked again so a hand-edited catalog cannot call a DELETE a
 * read. A method the catalog lacks is answered notFound before any request.
 */
export function callEffect(rt: Runtime, resource: string, method: string): Effect {
  const found = lookup(rt, resource, method);
  if ('ok' in found) return 'read';
  const m = found.method;
  if (m.http === 'DELETE' || m.kind === 'destructive') return 'destructive';
  if (m.kind === 'read' && (m.http === 'GET' || m.http === 'HEAD')) return 'read';
  return 'write';
}

/** The checks a call must pass before anything else: method exists, confirmed if destructive, arguments valid, a base URL. */
function precheck(rt: Runtime, input: CallInput) {
  const found = lookup(rt, input.resource, input.method);
  if ('ok' in found) return found;
  const m = found.method;
  if (m.kind === 'destructive' && input.confirm !== true)
    return failure(
      'confirmRequired',
      `${input.resource}.${m.name} is destructive (${m.http} ${m.path}); ask the user first, then call again with confirm: true.`,
    );
  const checked = checkArgs(input.resource, rt.tool('describe'), m, input.args ?? {}, rt.defaults);
  if ('ok' in checked) return checked;
  if (!rt.base)
    return failure(
      'unavailable',
      `No base URL is configured for ${rt.prefix} and the document names no absolute server; restart with --base-url URL.`,
    );
  return { method: m, checked, base: rt.base };
}

/** The resource a changing call acts on, as it is now (current.ts); null when there is none to read. */
function currentOf(rt: Runtime, input: CallInput) {
  const ready = precheck(rt, input);
  if ('ok' in ready) return Promise.resolve(null);
  return currentResource(rt, input, ready.method, ready.checked.pathValues, ready.base);
}

interface CallInput {
  resource: string;
  method: string;
  args?: Record<string, unknown> | undefined;
  limit?: number | undefined;
  confirm?: boolean | undefined;
}

/**
 * The policy's targets (authority.md §3): `<prefix>:<resource>.<method>`
 * and `<HTTP METHOD> <path template>`.
 */
export function callTargets(rt: Runtime, input: CallInput): string[] {
  const named = `${rt.prefix}:${input.resource}.${input.method}`;
  const found = lookup(rt, input.resource, input.method);
  return 'ok' in found ? [named] : [named, `${found.method.http} ${found.method.path}`];
}

/**
 * What the owner sees before an asked call runs: method, the full URL,
 * headers and body — credentials shown as [REDACTED], every configured
 * secret scrubbed in whatever form it takes.
 */
/** `resource <path>` of the request the handler would send (built the same way), or null when the call is refused first. */
export function callSubject(rt: Runtime, input: CallInput): string | null {
  const ready = precheck(rt, input);
  if ('ok' in ready) return null;
  const req = buildRequest({
    method: ready.method,
    base: ready.base,
    pathValues: ready.checked.pathValues,
    params: ready.checked.params,
    data: ready.checked.data,
    credentials: rt.credentials(ready.method),
    extraHeaders: rt.extraHeaders,
  });
  return `resource ${new URL(req.url).pathname}`;
}

export function callPreview(rt: Runtime, input: CallInput) {
  const ready = precheck(rt, input);
  const summary = `${rt.prefix}: ${input.resource}.${input.method}`;
  if ('ok' in ready) return { summary, arguments: redact(input.args ?? {}) };
  const { method: m, checked, base } = ready;
  const credentials = rt.credentials(m);
  const req = buildRequest({
    method: m,
    base,
    pathValues: checked.pathValues,
    params: checked.params,
    data: checked.data,
    credentials,
    extraHeaders: rt.extraHeaders,
  });
  const url = new URL(req.url);
  for (const [name] of credentials.query) url.searchParams.set(name, REDACTED);
  const secretHeaders = new Set(Object.keys(credentials.headers).map((h) => h.toLowerCase()));
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([k, v]) => [
      k,
      secretHeaders.has(k.toLowerCase()) || k.toLowerCase() === 'cookie' || isSecretName(k)
        ? REDACTED
        : rt.scrub(v),
    ]),
  );
  const body =
    typeof req.body === 'string'
      ? rt.scrub(req.body)
      : req.body instanceof URLSearchParams
        ? rt.scrub(req.body.toString())
        : req.body === undefined
          ? null
          : '(multipart form)';
  return {
    summary: `${summary} — ${m.http} ${rt.scrub(url.toString())}`,
    method: m.http,
    url: rt.scrub(url.toString()),
    headers,
    body,
  };
}

export function callTool(rt: Runtime, probe: Probe) {
  const title = rt.index.catalog.source.title || 'the API';
  return defineTool({
    name: rt.tool('call'),
    description:
      `Run a method of ${title}: {resource, method, args} with args by parameter name — path ids first (e.g. slug, project), then data (the body), then params (query: fields, filters, order_by, per_page, offset). ` +
      `iterate methods collect up to limit items across pages (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) → {items, count, truncated}. ` +
      `Destructive methods (delete, bulkDelete, remove, unlink) refuse to run without confirm: true — ask the user first and pass confirm only after they agree. ` +
      `Use ${rt.tool('describe')} first for the exact signature and an example input.`,
    input: z
      .object({
        resource: z.string().min(1).max(300),
        method: z.string().min(1).max(200),
        args: z.record(z.string(), z.unknown()).optional(),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
        confirm: z.boolean().optional(),
      })
      .strict(),
    // Per call (authority.md §3): GET/HEAD read, DELETE or a method the catalog marks
    // destructive destroys, anything else writes. Published as the worst a call can be,
    // stating only destructiveHint as Plane does.
    effect: (input) => callEffect(rt, input.resource, input.method),
    publishedEffect: 'destructive',
    // Bounds itself: text only, cut at RESULT_MAX_CHARS (60,000 characters ≈ 15k tokens) with a note.
    tokenBudget: false,
    statedHints: ['destructiveHint'],
    annotations: { openWorldHint: true, idempotentHint: false },
    policy: {
      targets: (input) => callTargets(rt, input),
      // The agent's own check (confirm) and the argument checks come before the owner is asked.
      check: (input) => {
        const ready = precheck(rt, input);
        return 'ok' in ready ? ready : null;
      },
      // The resource a "15 minutes" approval may be narrowed to: the path of the very
      // request the handler would send (built the same way), so the words cannot differ from it.
      subject: (input) => callSubject(rt, input),
      // What a PUT/PATCH/DELETE would replace or delete, read now: shown on the card,
      // and its version kept, so an approved call whose resource changed is asked again.
      observes: async (input) => {
        const current = await currentOf(rt, input);
        return current && 'state' in current ? current.state : undefined;
      },
      preview: async (input) => {
        const preview = callPreview(rt, input);
        const current = await currentOf(rt, input);
        if (!current) return preview;
        return 'note' in current
          ? { ...preview, currentNote: current.note }
          : { ...preview, current: current.shown, currentFrom: current.label };
      },
    },
    // A non-read call that times out may have happened: never claim "nothing was written".
    // A read (GET/HEAD) that times out wrote nothing, so it answers a plain timeout.
    writes: (input) => {
      const found = lookup(rt, input.resource, input.method);
      return 'ok' in found || found.method.kind !== 'read';
    },
    handler: async (input, ctx) => {
      // Requests are logged by the door's logger: resource, method, status, time — never URLs, headers or bodies.
      const refused = await probe.check();
      if (refused) return refused;
      const ready = precheck(rt, input);
      if ('ok' in ready) return ready;
      const { method: m, checked, base } = ready;
      const where = input.resource;
      const credentials = rt.credentials(m);
      const request = (params: Record<string, unknown>): UpstreamRequest =>
        buildRequest({
          method: m,
          base,
          pathValues: checked.pathValues,
          params,
          data: checked.data,
          credentials,
          extraHeaders: rt.extraHeaders,
        });
      const exchange = async (req: UpstreamRequest) => {
        const started = Date.now();
        // The upstream joins the caller's trace (W3C traceparent), when telemetry is on.
        const traced = ctx.traceContext?.() ?? {};
        const res = await send(
          Object.keys(traced).length ? { ...req, headers: { ...req.headers, ...traced } } : req,
          { signal: ctx.signal, limits: rt.limits, fetch: rt.fetch },
        );
        rt.logger.info(
          {
            resource: where,
            method: m.name,
            http: m.http,
            status: 'ok' in res ? res.code : res.status,
            ms: Date.now() - started,
          },
          'openapi request',
        );
        return res;
      };

      if (m.iterates && m.pagination) {
        const sizeSchema = m.params.find((p) => p.name === m.pagination?.sizeParam)?.schema as
          { maximum?: unknown } | undefined;
        const result = await iterate(
          m.pagination,
          checked.params,
          input.limit ?? DEFAULT_LIMIT,
          typeof sizeSchema?.maximum === 'number' ? sizeSchema.maximum : undefined,
          {
            first: request,
            follow: (url) => {
              for (const [k, v] of credentials.query)
                if (!url.searchParams.has(k)) url.searchParams.append(k, v);
              return { ...request(checked.params), url };
            },
            send: exchange,
          },
          `${m.http} ${m.path}`,
        );
        if ('ok' in result) return result;
        return { text: pretty(result) } satisfies Shown;
      }

      const res = await exchange(request(checked.params));
      if ('ok' in res) return res;
      return shownResponse(res, `${m.http} ${m.path}`, rt);
    },
  });
}

function shownResponse(res: UpstreamResponse, label: string, rt: Runtime) {
  if (res.status >= 400)
    return failure(
      'upstreamError',
      `${label} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.${hint(res.status, rt)}`,
      { status: res.status, body: res.body },
    );
  return { text: pretty(res.body === null ? { status: res.status } : res.body) } satisfies Shown;
}
