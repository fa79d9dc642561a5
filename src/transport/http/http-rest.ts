/**
 * REST under `/api/v1`: the kernel's routes and the doors' routes on one
 * router, bodies capped per route before parsing, and every outcome written
 * in one place — a `RestResponse` as given, a `Failure` (returned or thrown as
 * `AirlockError`) through `failureResponse`, anything else as `internal`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  AirlockError,
  failure,
  internalFailure,
  isFailure,
  type Failure,
} from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import { failureResponse, sendFailure } from './http-errors.js';
import { readBody, sendJson } from './http-util.js';
import { MAX_JSON_DEPTH, textNestsDeeperThan } from '../../kernel/calls/json-depth.js';
import { createRouter } from './router.js';
import type { RestResponse, RestRoute } from '../surface.js';
import { admit, type Caller } from '../auth.js';
import { checkPresence } from '../rest/presence-gate.js';
import type { Presence } from '../../kernel/authority/presence.js';

export interface RestDispatchOptions {
  routes: readonly RestRoute[];
  logger: Logger;
  /** Body cap for routes that declare none. */
  maxBodyBytes: number;
  /** The kernel's presence check for deciding routes (issue 25); none: nothing needs it. */
  presence?: Presence;
}

export interface RestDispatch {
  /**
   * Handles `sub` (the path below `/api/v1/`) for `caller`: the route's
   * audience is checked before its body is read.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    sub: string,
    caller: Caller | null,
  ): Promise<void>;
  routes(): RestRoute[];
}

export function createRestDispatch(options: RestDispatchOptions): RestDispatch {
  const router = createRouter();
  for (const route of options.routes) router.add(route);

  const run = async (route: RestRoute, request: Parameters<RestRoute['handler']>[0]) => {
    try {
      const out = await route.handler(request);
      return isFailure(out) ? failureResponse(out) : out;
    } catch (error) {
      if (error instanceof AirlockError) return failureResponse(error.toFailure());
      const internal = internalFailure();
      options.logger.error(
        { err: error, logId: internal.data?.logId, route: `${route.method} ${route.path}` },
        'REST route failed',
      );
      return failureResponse(internal);
    }
  };

  return {
    routes: () => router.routes(),
    async handle(req, res, url, sub, caller) {
      const m = router.match(req.method ?? 'GET', sub);
      if (!m.route) {
        if ('pathExists' in m && m.pathExists) {
          sendFailure(
            res,
            failure(
              'malformedRequest',
              `${req.method} is not supported on /api/v1/${sub}; see GET /api/v1/openapi.json.`,
            ),
            405,
          );
        } else {
          sendFailure(
            res,
            failure(
              'notFound',
              `No route /api/v1/${sub}; see GET /api/v1/openapi.json for the routes.`,
            ),
          );
        }
        return;
      }
      const refused = admit(req, m.route.audience ?? 'owner', caller);
      if (refused) {
        if (refused.status === 401) res.setHeader('www-authenticate', 'Bearer realm="airlock"');
        sendFailure(res, refused.failure, refused.status);
        return;
      }
      const body = await parseBody(req, m.route, m.route.maxBodyBytes ?? options.maxBodyBytes);
      if ('status' in body) {
        sendFailure(res, body.failure, body.status);
        return;
      }
      const request = {
        params: m.params,
        caller,
        query: url.searchParams,
        body: body.value,
        headers: req.headers,
      };
      const absent = options.presence
        ? await checkPresence(options.presence, m.route, req.method ?? 'GET', sub, request)
        : null;
      writeResponse(res, absent ? failureResponse(absent) : await run(m.route, request));
    },
  };
}

const mediaType = (req: IncomingMessage) =>
  (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/**
 * The body, capped before parsing (in bytes and in JSON nesting): JSON for `application/json`, bytes on
 * `raw` routes (uploads), an empty body `undefined`. A JSON route refuses any
 * other content type (authority.md §4): a browser page can send
 * `text/plain` without asking first, so it must not count as JSON.
 */
async function parseBody(
  req: IncomingMessage,
  route: RestRoute,
  max: number,
): Promise<{ value: unknown } | { failure: Failure; status: number }> {
  if (req.method === 'GET' || req.method === 'HEAD') return { value: undefined };
  const bytes = await readBody(req, max);
  if (bytes.length === 0) return { value: undefined };
  const json = mediaType(req) === 'application/json';
  if (!json) {
    if (route.body === 'raw') return { value: bytes };
    return {
      status: 415,
      failure: failure(
        'malformedRequest',
        `Send this route's body as Content-Type: application/json (got '${mediaType(req) || 'none'}').`,
      ),
    };
  }
  const text = bytes.toString('utf8');
  // Routes walk bodies recursively (validation, digests): JSON nesting ≤ 64 levels (authority.md §4).
  if (textNestsDeeperThan(text)) {
    return {
      status: 400,
      failure: failure(
        'malformedRequest',
        `The request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays; flatten it and retry.`,
        { maxDepth: MAX_JSON_DEPTH },
      ),
    };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return {
      status: 400,
      failure: failure('malformedRequest', 'The request body is not valid JSON; fix it and retry.'),
    };
  }
}

function writeResponse(res: ServerResponse, out: RestResponse): void {
  for (const [name, value] of Object.entries(out.headers ?? {})) res.setHeader(name, value);
  if (out.raw) {
    res.writeHead(out.status, {
      'content-type': out.raw.contentType,
      'content-length': String(out.raw.bytes.byteLength),
      ...(out.raw.filename
        ? { 'content-disposition': `attachment; filename="${out.raw.filename}"` }
        : {}),
    });
    res.end(out.raw.bytes);
  } else if (out.body === undefined) {
    res.writeHead(out.status).end();
  } else sendJson(res, out.status, out.body);
}
