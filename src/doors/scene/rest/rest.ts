/**
 * What the scene door's REST route groups share: the dependencies they are
 * built from, the route and response shapes, body parsing, and `asTool`, which
 * runs a REST write as the matching MCP tool. Failures, returned or thrown as
 * `AirlockError`, are mapped to `{status, code, message}` by the HTTP layer.
 */
import type { z } from 'zod';
import {
  AirlockError,
  agentKeyOf,
  connection,
  validateInput,
  type CallOutcome,
  type Failure,
  type Kernel,
} from '../../../kernel/index.js';
import type { RestRequest, RestResponse, RestRoute } from '../../../transport/surface.js';
import type { EngineRegistry } from '../engines/registry.js';
import type { SceneSession } from '../session.js';
import type { ToolNames } from '../tools/tools.js';
import type { RestToolNames } from './tools-rest.js';
import type { Staging } from './staging.js';

export interface RouteDeps {
  session: SceneSession;
  registry: EngineRegistry;
  kernel: () => Kernel;
  /** Tool names, for the REST writes that run as tool calls. */
  names: ToolNames;
  /** The REST-only tools' names (tools-rest.ts). */
  restNames: RestToolNames;
  /** Where uploads wait for their tool (staging.ts). */
  staging: Staging;
  version: string;
}

/**
 * A REST caller's connection for limits, policy and audit: the agent it acts
 * as (authority.md §1: "writes there run as tool calls"), or the owner.
 */
const restConnection = (req: RestRequest) => {
  const caller = req.caller;
  if (caller?.kind === 'agent')
    return connection(`agent:${caller.key}/rest`, 'rest', undefined, caller.agent);
  if (caller?.kind === 'anonymous')
    return connection('agent:anonymous/rest', 'rest', undefined, 'anonymous');
  return connection('owner/rest:scene', 'rest');
};

/**
 * The jobs as a REST caller sees them: an agent only the ones it started
 * (another's answer as unknown ids), the owner every job (authority.md §1).
 */
export const jobsSeenBy = (deps: Pick<RouteDeps, 'kernel'>, req: RestRequest) =>
  deps.kernel().jobs.seenBy(agentKeyOf(restConnection(req)));

/** Page images and project zips are larger than the server's default body cap. */
export const UPLOAD_MAX_BYTES = 256 * 1024 * 1024;
const UPLOADS = new Set(['POST pages', 'POST projects/import']);
/** Routes that take a body other than JSON (uploads, CSV texts). */
const RAW_BODIES = new Set([...UPLOADS, 'PUT projects/current/texts']);

export const route = (
  method: RestRoute['method'],
  path: string,
  summary: string,
  handler: RestRoute['handler'],
): RestRoute => ({
  method,
  // Koharu's HTTP API is for its clients (agents) and the owner alike (authority.md §1).
  audience: 'agent',
  ...(UPLOADS.has(`${method} ${path}`) ? { maxBodyBytes: UPLOAD_MAX_BYTES } : {}),
  ...(RAW_BODIES.has(`${method} ${path}`) ? { body: 'raw' as const } : {}),
  path,
  summary,
  handler,
});

export const ok = (body: unknown, status = 200): RestResponse => ({ status, body });

/** A download: raw bytes, with a filename when the browser should save them. */
export const file = (f: {
  bytes: Uint8Array;
  contentType: string;
  filename?: string;
}): RestResponse => ({
  status: 200,
  raw: {
    bytes: f.bytes,
    contentType: f.contentType,
    ...(f.filename ? { filename: f.filename } : {}),
  },
});

/**
 * Every state change over REST runs as a tool call through the kernel
 * pipeline (issue 24: one entrance) — the matching MCP tool, or the route's
 * own REST-only tool (tools-rest.ts) — so policy, `readOnly`, rates, limits
 * and audit decide it exactly as they decide an MCP call. The outcome as
 * the kernel gave it, for routes that answer with more than the tool's value.
 */
export const callTool = (
  deps: Pick<RouteDeps, 'kernel'>,
  req: RestRequest,
  tool: string,
  args: unknown,
): Promise<CallOutcome> =>
  deps.kernel().call('scene', tool, args, { connection: restConnection(req) });

/** A state change run as `tool` (see `callTool`), answered with the tool's value. */
export async function asTool(
  deps: Pick<RouteDeps, 'kernel'>,
  req: RestRequest,
  tool: string,
  args: unknown,
  status = 200,
): Promise<RestResponse | Failure> {
  const outcome = await callTool(deps, req, tool, args);
  return outcome.ok ? ok(outcome.value, status) : outcome;
}

export function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = validateInput(schema, body ?? {});
  if (!r.ok) throw new AirlockError(r.code, r.message);
  return r.value;
}

export const header = (req: RestRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export const bytesOf = (body: unknown): Uint8Array => {
  if (body instanceof Uint8Array) return body;
  throw new AirlockError('malformedRequest', 'Send the file as the raw request body (not JSON).');
};

/** The raw body as a Buffer over the same memory, for the multipart parser. */
export function bytesAsBuffer(body: unknown): Buffer {
  const bytes = bytesOf(body);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
