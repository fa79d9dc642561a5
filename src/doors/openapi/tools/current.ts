/**
 * What a PUT, PATCH or DELETE acts on, as it is now (issue 27): the
 * document's GET on the same path, sent with the same path values and
 * credentials, so the owner's card shows the resource the call would
 * replace or delete, and the approval keeps a digest of it (an approved call
 * whose resource changed since is asked again). Read once per decision;
 * never when the document has no such GET (the card says so).
 */
import { createHash } from 'node:crypto';
import { redact } from '../../../kernel/index.js';
import type { Runtime } from '../runtime.js';
import type { MethodEntry } from '../catalog-index.js';
import { buildRequest } from '../http/build.js';
import { send } from '../http/send.js';

/** The resource's state for the owner: its JSON (bounded, secrets out) and its version, or why not. */
export type CurrentResource = { state: string; shown: unknown; label: string } | { note: string };

const CHANGING = new Set(['PUT', 'PATCH', 'DELETE']);
/** How long the look may take: a slow API never holds up the ask for long. */
const LOOK_TIMEOUT_MS = 5_000;
/** At most this much of the current resource is shown on the card. */
const SHOWN_CHARS = 4_000;

/** The document's GET on `path`, if it has one. */
function getFor(rt: Runtime, path: string): MethodEntry | undefined {
  for (const resource of rt.index.resources)
    for (const m of resource.methods.values())
      if (m.http === 'GET' && m.path === path && !m.iterates) return m;
  return undefined;
}

/** The JSON a person reads: secret-named keys redacted, configured secrets scrubbed, bounded. */
function shownOf(rt: Runtime, body: unknown): unknown {
  const text = rt.scrub(JSON.stringify(redact(body)) ?? 'null');
  if (text.length <= SHOWN_CHARS) return JSON.parse(text) as unknown;
  return `${text.slice(0, SHOWN_CHARS)}… ${text.length - SHOWN_CHARS} more characters`;
}

const looked = new WeakMap<object, Promise<CurrentResource | null>>();

/**
 * The current resource a changing call acts on; null for a call that
 * changes nothing or that its own checks refuse. One look per call's input
 * object (the preview and the approval's state share it).
 */
export function currentResource(
  rt: Runtime,
  input: object,
  method: MethodEntry,
  pathValues: Record<string, string>,
  base: URL,
): Promise<CurrentResource | null> {
  if (!CHANGING.has(method.http)) return Promise.resolve(null);
  let found = looked.get(input);
  if (!found) {
    found = look(rt, method, pathValues, base);
    looked.set(input, found);
  }
  return found;
}

async function look(
  rt: Runtime,
  method: MethodEntry,
  pathValues: Record<string, string>,
  base: URL,
): Promise<CurrentResource> {
  const get = getFor(rt, method.path);
  if (!get)
    return {
      note: `The API document has no GET ${method.path}: the current resource is not shown.`,
    };
  const label = `GET ${get.path}`;
  const req = buildRequest({
    method: get,
    base,
    pathValues,
    params: {},
    data: undefined,
    credentials: rt.credentials(get),
    extraHeaders: rt.extraHeaders,
  });
  const res = await send(req, {
    signal: AbortSignal.timeout(LOOK_TIMEOUT_MS),
    limits: { ...rt.limits, timeoutMs: Math.min(rt.limits.timeoutMs, LOOK_TIMEOUT_MS) },
    fetch: rt.fetch,
  });
  if ('ok' in res)
    return { note: `${label} could not be read (${res.code}): the current resource is not shown.` };
  if (res.status >= 400)
    return { note: `${label} answered ${res.status}: the current resource is not shown.` };
  const etag = res.headers.get('etag');
  const digest = createHash('sha256').update(JSON.stringify(res.body)).digest('hex').slice(0, 12);
  return {
    state: `${label} ${etag ? `etag ${etag}` : `sha256:${digest}`}`,
    shown: shownOf(rt, res.body),
    label,
  };
}
