/**
 * One view of every operation, whatever the document's version: OpenAPI
 * 3.0/3.1 as written, Swagger 2.0 mapped onto the same shape (body and
 * formData parameters become the request body, `definitions` are reached by
 * their own `$ref`s, `securityDefinitions` become security schemes).
 */
import { isObject } from '../../../kernel/objects.js';
import { DocumentError, pointerOf } from './errors.js';
import type { Location, Resolver } from './refs.js';

type Obj = Record<string, unknown>;

export const HTTP_METHODS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
] as const;

export interface ParameterView {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  description?: string | undefined;
  /** Resolved schema. */
  schema: unknown;
  style?: string | undefined;
  explode?: boolean | undefined;
}

export interface OperationView {
  path: string;
  http: string;
  operationId?: string | undefined;
  summary: string;
  parameters: ParameterView[];
  body?: { required: boolean; contentType: string; schema: unknown } | undefined;
  /** Resolved schema of the first 2xx response with a body. */
  response?: unknown;
  /** Lower-cased names of the success response's headers. */
  responseHeaders: string[];
  /** Alternatives; each a list of scheme names (empty = anonymous). Undefined: the document's default. */
  security?: string[][] | undefined;
  /** Where the operation is, for errors. */
  pointer: string;
}

export type SecurityScheme =
  | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string }
  | { type: 'http'; scheme: string }
  | { type: 'oauth2' }
  | { type: 'openIdConnect' };

export interface DocumentView {
  format: string;
  title: string;
  version: string;
  servers: string[];
  securitySchemes: Record<string, SecurityScheme>;
  security: string[][];
  operations: OperationView[];
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

function securityOf(value: unknown): string[][] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isObject).map((req) => Object.keys(req));
}

function schemes(raw: unknown): Record<string, SecurityScheme> {
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

function serverUrls(root: Obj, swagger: boolean): string[] {
  if (swagger) {
    const base = typeof root.basePath === 'string' ? root.basePath : '';
    if (typeof root.host !== 'string') return base ? [base] : [];
    const scheme =
      Array.isArray(root.schemes) && typeof root.schemes[0] === 'string'
        ? root.schemes[0]
        : 'https';
    return [`${scheme}://${root.host}${base}`];
  }
  if (!Array.isArray(root.servers)) return [];
  return root.servers.filter(isObject).flatMap((s) => {
    if (typeof s.url !== 'string') return [];
    const vars = isObject(s.variables) ? s.variables : {};
    return [
      s.url.replace(/\{([^}]+)\}/g, (m, name: string) => {
        const v = vars[name];
        return isObject(v) && v.default !== undefined ? String(v.default) : m;
      }),
    ];
  });
}

/** Swagger 2.0 keeps a non-body parameter's schema keywords on the parameter itself. */
const SWAGGER_SCHEMA_KEYS = [
  'type',
  'format',
  'items',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
];

export function readDocument(resolver: Resolver): DocumentView {
  const doc = resolver.main;
  const root = doc.root as Obj;
  const swagger = typeof root.swagger === 'string';
  if (!swagger && typeof root.openapi !== 'string')
    throw new DocumentError(
      doc.label,
      '',
      'not an OpenAPI 3.x or Swagger 2.0 document (no openapi or swagger field)',
    );
  if (swagger && !String(root.swagger).startsWith('2'))
    throw new DocumentError(
      doc.label,
      '/swagger',
      `Swagger ${String(root.swagger)} is not supported (2.0 is)`,
    );
  if (!swagger && !/^3\.[01]/.test(String(root.openapi)))
    throw new DocumentError(
      doc.label,
      '/openapi',
      `OpenAPI ${String(root.openapi)} is not supported (3.0 and 3.1 are)`,
    );
  // OpenAPI 3.1 may describe only webhooks: no paths is then an empty catalog.
  const only31 = !swagger && String(root.openapi).startsWith('3.1') && root.paths === undefined;
  if (!isObject(root.paths) && !only31)
    throw new DocumentError(doc.label, '/paths', 'missing or not an object');
  const info = isObject(root.info) ? root.info : {};
  const components = isObject(root.components) ? root.components : {};
  const view: DocumentView = {
    format: swagger ? `swagger ${String(root.swagger)}` : `openapi ${String(root.openapi)}`,
    title: typeof info.title === 'string' ? info.title : '',
    version: typeof info.version === 'string' ? info.version : String(info.version ?? ''),
    servers: serverUrls(root, swagger),
    securitySchemes: schemes(swagger ? root.securityDefinitions : components.securitySchemes),
    security: securityOf(root.security) ?? [],
    operations: [],
  };
  const consumes = Array.isArray(root.consumes) ? root.consumes.map(String) : [];
  for (const [path, rawItem] of Object.entries(isObject(root.paths) ? root.paths : {})) {
    const itemAt: Location = { doc, pointer: pointerOf('/paths', path) };
    const { node: item, loc: itemLoc } = resolver.deref(rawItem, itemAt);
    if (!isObject(item))
      throw new DocumentError(doc.label, itemAt.pointer, 'a path item must be an object');
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (op === undefined) continue;
      const at: Location = { doc: itemLoc.doc, pointer: pointerOf(itemLoc.pointer, method) };
      if (!isObject(op))
        throw new DocumentError(at.doc.label, at.pointer, 'an operation must be an object');
      view.operations.push(
        swagger
          ? swaggerOperation(resolver, path, method, op, item, at, itemLoc, consumes)
          : openapiOperation(resolver, path, method, op, item, at, itemLoc),
      );
    }
  }
  return view;
}

/** Path-level parameters, overridden by operation-level ones with the same name and location. */
function mergedParameters(
  resolver: Resolver,
  op: Obj,
  item: Obj,
  at: Location,
  itemLoc: Location,
): { p: Obj; loc: Location }[] {
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

const summaryOf = (op: Obj) =>
  typeof op.summary === 'string' && op.summary.trim()
    ? op.summary.trim()
    : typeof op.description === 'string'
      ? (op.description.trim().split(/\n|(?<=\.)\s/)[0] ?? '')
      : '';

function successResponse(
  resolver: Resolver,
  op: Obj,
  at: Location,
): { node: Obj; loc: Location } | undefined {
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

function openapiOperation(
  resolver: Resolver,
  path: string,
  method: string,
  op: Obj,
  item: Obj,
  at: Location,
  itemLoc: Location,
): OperationView {
  const parameters: ParameterView[] = mergedParameters(resolver, op, item, at, itemLoc).map(
    ({ p, loc }) => ({
      name: String(p.name),
      in: (['path', 'query', 'header', 'cookie'].includes(String(p.in))
        ? p.in
        : 'query') as ParameterView['in'],
      required: p.in === 'path' || p.required === true,
      description: typeof p.description === 'string' ? p.description : undefined,
      schema: isObject(p.schema)
        ? resolver.schema(p.schema, { doc: loc.doc, pointer: pointerOf(loc.pointer, 'schema') })
        : isObject(p.content)
          ? firstContentSchema(resolver, p.content, pointerOf(loc.pointer, 'content'), loc)
          : {},
      style: typeof p.style === 'string' ? p.style : undefined,
      explode: typeof p.explode === 'boolean' ? p.explode : undefined,
    }),
  );
  let body: OperationView['body'];
  if (op.requestBody !== undefined) {
    const r = resolver.deref(op.requestBody, {
      doc: at.doc,
      pointer: pointerOf(at.pointer, 'requestBody'),
    });
    if (isObject(r.node) && isObject(r.node.content)) {
      const contentType = pickContentType(Object.keys(r.node.content));
      if (contentType) {
        const media = r.node.content[contentType];
        const schemaAt = {
          doc: r.loc.doc,
          pointer: pointerOf(r.loc.pointer, 'content', contentType, 'schema'),
        };
        body = {
          required: r.node.required === true,
          contentType,
          schema:
            isObject(media) && isObject(media.schema)
              ? resolver.schema(media.schema, schemaAt)
              : {},
        };
      }
    }
  }
  const success = successResponse(resolver, op, at);
  let response: unknown;
  if (success && isObject(success.node.content)) {
    const ct = pickContentType(Object.keys(success.node.content));
    const media = ct ? success.node.content[ct] : undefined;
    if (ct && isObject(media) && isObject(media.schema))
      response = resolver.schema(media.schema, {
        doc: success.loc.doc,
        pointer: pointerOf(success.loc.pointer, 'content', ct, 'schema'),
      });
  }
  return {
    path,
    http: method.toUpperCase(),
    operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
    summary: summaryOf(op),
    parameters,
    body,
    response,
    responseHeaders:
      success && isObject(success.node.headers)
        ? Object.keys(success.node.headers).map((h) => h.toLowerCase())
        : [],
    security: securityOf(op.security),
    pointer: at.pointer,
  };
}

function firstContentSchema(
  resolver: Resolver,
  content: Obj,
  pointer: string,
  loc: Location,
): unknown {
  const ct = pickContentType(Object.keys(content));
  const media = ct ? content[ct] : undefined;
  return ct && isObject(media) && isObject(media.schema)
    ? resolver.schema(media.schema, { doc: loc.doc, pointer: pointerOf(pointer, ct, 'schema') })
    : {};
}

function swaggerOperation(
  resolver: Resolver,
  path: string,
  method: string,
  op: Obj,
  item: Obj,
  at: Location,
  itemLoc: Location,
  docConsumes: string[],
): OperationView {
  const parameters: ParameterView[] = [];
  let body: OperationView['body'];
  const form: { properties: Obj; required: string[] } = { properties: {}, required: [] };
  const consumes = Array.isArray(op.consumes) ? op.consumes.map(String) : docConsumes;
  for (const { p, loc } of mergedParameters(resolver, op, item, at, itemLoc)) {
    const own = Object.fromEntries(
      SWAGGER_SCHEMA_KEYS.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]),
    );
    const schema = resolver.schema(p.in === 'body' ? (p.schema ?? {}) : own, {
      doc: loc.doc,
      pointer: p.in === 'body' ? pointerOf(loc.pointer, 'schema') : loc.pointer,
    });
    if (p.in === 'body') {
      body = {
        required: p.required === true,
        contentType:
          pickContentType(consumes.length ? consumes : ['application/json']) ?? 'application/json',
        schema,
      };
    } else if (p.in === 'formData') {
      form.properties[String(p.name)] = schema;
      if (p.required === true) form.required.push(String(p.name));
    } else {
      const cf = p.collectionFormat;
      parameters.push({
        name: String(p.name),
        in: (['path', 'query', 'header'].includes(String(p.in))
          ? p.in
          : 'query') as ParameterView['in'],
        required: p.in === 'path' || p.required === true,
        description: typeof p.description === 'string' ? p.description : undefined,
        schema,
        style:
          cf === 'csv'
            ? 'form'
            : cf === 'pipes'
              ? 'pipeDelimited'
              : cf === 'ssv'
                ? 'spaceDelimited'
                : undefined,
        explode: cf === 'multi' ? true : cf !== undefined ? false : undefined,
      });
    }
  }
  if (!body && Object.keys(form.properties).length > 0) {
    const multipart = consumes.some((c) => /multipart\/form-data/i.test(c));
    body = {
      required: form.required.length > 0,
      contentType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
      schema: {
        type: 'object',
        properties: form.properties,
        ...(form.required.length ? { required: form.required } : {}),
      },
    };
  }
  const success = successResponse(resolver, op, at);
  return {
    path,
    http: method.toUpperCase(),
    operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
    summary: summaryOf(op),
    parameters,
    body,
    response:
      success && isObject(success.node.schema)
        ? resolver.schema(success.node.schema, {
            doc: success.loc.doc,
            pointer: pointerOf(success.loc.pointer, 'schema'),
          })
        : undefined,
    responseHeaders:
      success && isObject(success.node.headers)
        ? Object.keys(success.node.headers).map((h) => h.toLowerCase())
        : [],
    security: securityOf(op.security),
    pointer: at.pointer,
  };
}
