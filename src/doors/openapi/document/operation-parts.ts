/**
 * What OpenAPI 3.x and Swagger 2.0 read the same way: security requirements
 * and schemes, path- and operation-level parameters, the success response,
 * content-type preference, and the parts of an operation's view that do not
 * depend on the version.
 */
import { isObject } from '../../../kernel/index.js';
import { DocumentError, pointerOf } from './errors.js';
import type { Location, Resolver } from './refs.js';
import type { OperationView, SecurityScheme } from './view.js';

export type Obj = Record<string, unknown>;

/** One operation as found in the document, with where it and its path item are. */
export interface OperationSource {
  resolver: Resolver;
  path: string;
  method: string;
  op: Obj;
  item: Obj;
  at: Location;
  itemLoc: Location;
}

const JSON_TYPES = [
  /^application\/json\b/i,
  /\+json\b/i,
  /^application\/x-www-form-urlencoded\b/i,
  /^multipart\/form-data\b/i,
  /^text\/plain\b/i,
];

/** Prefers JSON, then form encodings, then whatever comes first. */
export function pickContentType(types: string[]): string | undefined {
  for (const pattern of JSON_TYPES) {
    const found = types.find((t) => pattern.test(t));
    if (found) return found;
  }
  return types[0];
}

export function securityOf(value: unknown): string[][] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((req) => Object.keys(req));
}

/** OpenAPI 3 `securitySchemes` or Swagger 2 `securityDefinitions` (whose `basic` is HTTP basic). */
export function securitySchemes(raw: unknown): Record<string, SecurityScheme> {
  const out: Record<string, SecurityScheme> = {};
  if (!isObject(raw)) return out;
  for (const [name, s] of Object.entries(raw)) {
    if (!isObject(s)) continue;
    if (s.type === 'apiKey' && typeof s.name === 'string')
      out[name] = {
        type: 'apiKey',
        in: s.in === 'query' ? 'query' : s.in === 'cookie' ? 'cookie' : 'header',
        name: s.name,
      };
    else if (s.type === 'http')
      out[name] = { type: 'http', scheme: String(s.scheme ?? 'bearer').toLowerCase() };
    else if (s.type === 'basic') out[name] = { type: 'http', scheme: 'basic' };
    else if (s.type === 'oauth2') out[name] = { type: 'oauth2' };
    else if (s.type === 'openIdConnect') out[name] = { type: 'openIdConnect' };
  }
  return out;
}

/** Path-level parameters, overridden by operation-level ones with the same name and location. */
export function mergedParameters(source: OperationSource): { p: Obj; loc: Location }[] {
  const { resolver, op, item, at, itemLoc } = source;
  const collect = (list: unknown, loc: Location) =>
    (Array.isArray(list) ? list : []).map((raw, i) => {
      const r = resolver.deref(raw, {
        doc: loc.doc,
        pointer: pointerOf(loc.pointer, 'parameters', i),
      });
      if (!isObject(r.node) || typeof r.node.name !== 'string')
        throw new DocumentError(r.loc.doc.label, r.loc.pointer, 'a parameter needs a name');
      return { p: r.node, loc: r.loc };
    });
  const merged = new Map<string, { p: Obj; loc: Location }>();
  for (const e of [...collect(item.parameters, itemLoc), ...collect(op.parameters, at)])
    merged.set(`${String(e.p.in)}:${String(e.p.name)}`, e);
  return [...merged.values()];
}

/** The first 2xx response (by code) that is an object, dereferenced. */
export function successResponse(source: OperationSource): { node: Obj; loc: Location } | undefined {
  const { resolver, op, at } = source;
  if (!isObject(op.responses)) return undefined;
  const codes = Object.keys(op.responses)
    .filter((c) => /^2/.test(c))
    .sort();
  for (const code of codes) {
    const r = resolver.deref(op.responses[code], {
      doc: at.doc,
      pointer: pointerOf(at.pointer, 'responses', code),
    });
    if (isObject(r.node)) return { node: r.node, loc: r.loc };
  }
  return undefined;
}

const summaryOf = (op: Obj) =>
  typeof op.summary === 'string' && op.summary.trim()
    ? op.summary.trim()
    : typeof op.description === 'string'
      ? (op.description.trim().split(/\n|(?<=\.)\s/)[0] ?? '')
      : '';

/** The operation's view from what each version reads its own way (parameters, body, response). */
export function operationView(
  source: OperationSource,
  success: { node: Obj } | undefined,
  parts: Pick<OperationView, 'parameters' | 'body' | 'response'>,
): OperationView {
  const { op } = source;
  return {
    path: source.path,
    http: source.method.toUpperCase(),
    operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
    summary: summaryOf(op),
    parameters: parts.parameters,
    body: parts.body,
    response: parts.response,
    responseHeaders:
      success && isObject(success.node.headers)
        ? Object.keys(success.node.headers).map((h) => h.toLowerCase())
        : [],
    security: securityOf(op.security),
    pointer: source.at.pointer,
  };
}
