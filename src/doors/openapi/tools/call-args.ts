/**
 * The checks `<prefix>_call` makes before any request, in the reference's
 * order (spec/openapi.md "Tools"): unknown argument names; defaults applied
 * (`slug` from the configured workspace, any `--default name=value`);
 * missing required arguments; the body and query validated against the
 * spec's schemas (a JSON pointer per violation); path values that would
 * change the path refused; header values HTTP cannot carry refused; text
 * with no UTF-8 form refused. Each
 * failure says how to fix the call, and none sends anything.
 */
import { failure, isFailure, isObject, type Failure } from '../../../kernel/index.js';
import type { MethodEntry } from '../catalog-index.js';
import { signature } from '../catalog-index.js';
import { createValidator, type Violation } from '../compile/validate.js';
import { scalar, unpairedSurrogate, unsafeHeaderValue, unsafePathValue } from '../http/build.js';
import { escapeToken } from '../document/errors.js';

export interface CheckedArgs {
  /** Path values by the spec's parameter name. */
  pathValues: Record<string, string>;
  params: Record<string, unknown>;
  data: unknown;
}

/** spec/openapi.md: "fields, filters, order_by, per_page and offset pass through in params". */
const PASS_THROUGH = ['fields', 'expand', 'order_by', 'per_page', 'offset'];

const bodyValidator = createValidator(false);
const queryValidator = createValidator(true);

/** One wrapper object per parameter schema, so compiled validators are reused (Ajv caches by object). */
const wrappers = new WeakMap<object, object>();
function asValue(schema: unknown): object {
  const key = schema !== null && typeof schema === 'object' ? schema : wrappers;
  let w = wrappers.get(key);
  if (!w) {
    w = { type: 'object', properties: { value: schema } };
    wrappers.set(key, w);
  }
  return w;
}

const list = (names: string[]) => names.map((n) => `'${n}'`).join(', ');

/** The method being called and how its failures name it and point to help. */
interface Call {
  method: MethodEntry;
  /** `<prefix>` of the tools, as failures name the method. */
  where: string;
  /** `<where>.<signature>`, as failures show the call. */
  sig: string;
  /** The describe tool's name, which failures point to. */
  describeTool: string;
}

type Params = Record<string, unknown>;

export function checkArgs(
  where: string,
  describeTool: string,
  method: MethodEntry,
  rawArgs: Record<string, unknown>,
  defaults: Record<string, string>,
): CheckedArgs | Failure {
  const call: Call = { method, where, sig: `${where}.${signature(method)}`, describeTool };
  const named = knownNames(call, rawArgs);
  if (isFailure(named)) return named;
  const { pathValues, params } = withDefaults(method, rawArgs, named.params, defaults);
  const missing = missingRequired(call, rawArgs, pathValues, params);
  if (missing) return missing;
  const checked = matchingSchemas(call, rawArgs, pathValues, params);
  if (isFailure(checked)) return checked;
  const path = pathKeeping(method, pathValues);
  if (isFailure(path)) return path;
  const headers = sendableHeaders(method, checked.params);
  if (headers) return headers;
  const unsendable = sendableText(path.pathValues, checked.params);
  if (unsendable) return unsendable;
  return { pathValues: path.pathValues, params: checked.params, data: rawArgs.data };
}

/** 1. Unknown argument names, then unknown names inside `params`; passes a copy of `params` on. */
function knownNames(call: Call, rawArgs: Record<string, unknown>): { params: Params } | Failure {
  const { method, sig } = call;
  const known = new Set<string>(['params']);
  const listing = method.http === 'GET';
  for (const p of method.pathIds) known.add(p.name).add(p.original);
  if (method.body) known.add('data');
  const unknown = Object.keys(rawArgs).filter(
    (k) => !known.has(k) || (k === 'params' && method.params.length === 0 && !listing),
  );
  if (unknown.length > 0)
    return failure(
      'malformedRequest',
      `Unknown argument${unknown.length > 1 ? 's' : ''} ${list(unknown)} for ${sig}; pass only those (path ids, then data, then params).`,
      { unknown },
    );
  const given = rawArgs.params;
  if (given !== undefined && !isObject(given))
    return failure(
      'malformedRequest',
      `args.params must be an object of query parameters for ${sig}; pass them as {name: value}.`,
    );
  const params: Params = { ...(given ?? {}) };
  // The listing parameters the reference names pass through even where a document forgets to declare them.
  const unknownParams = Object.keys(params).filter(
    (k) =>
      !method.params.some((p) => p.name === k) &&
      !(method.http === 'GET' && PASS_THROUGH.includes(k)),
  );
  if (unknownParams.length > 0)
    return failure(
      'malformedRequest',
      `Unknown params ${list(unknownParams)} for ${call.where}.${method.name}; known params: ${method.params.map((p) => p.name).join(', ') || 'none'}.`,
      { unknown: unknownParams.map((k) => `params.${k}`) },
    );
  return { params };
}

/** 2. Defaults: a path id not given, and a param not given, take the configured default. */
function withDefaults(
  method: MethodEntry,
  rawArgs: Record<string, unknown>,
  given: Params,
  defaults: Record<string, string>,
): { pathValues: Record<string, unknown>; params: Params } {
  const pathValues: Record<string, unknown> = {};
  for (const p of method.pathIds) {
    pathValues[p.original] =
      rawArgs[p.name] ?? rawArgs[p.original] ?? defaults[p.name] ?? defaults[p.original];
  }
  const params: Params = { ...given };
  for (const p of method.params)
    if (params[p.name] === undefined && defaults[p.name] !== undefined)
      params[p.name] = defaults[p.name];
  return { pathValues, params };
}

/** 3. Missing required path ids, body and params, all named in one failure. */
function missingRequired(
  call: Call,
  rawArgs: Record<string, unknown>,
  pathValues: Record<string, unknown>,
  params: Params,
): Failure | undefined {
  const { method } = call;
  const missing = [
    ...method.pathIds
      .filter((p) => pathValues[p.original] === undefined || pathValues[p.original] === null)
      .map((p) => p.name),
    ...(method.body?.required && rawArgs.data === undefined ? ['data'] : []),
    ...method.params
      .filter((p) => p.required && params[p.name] === undefined)
      .map((p) => `params.${p.name}`),
  ];
  if (missing.length === 0) return undefined;
  return failure(
    'malformedRequest',
    `Missing required argument${missing.length > 1 ? 's' : ''} ${list(missing)} for ${call.sig}; ${call.describeTool} shows their types.`,
    { missing },
  );
}

/**
 * 4. Path ids, the body and params validated against the spec's schemas, a
 * JSON pointer per violation. Params come back as the query validator
 * coerced them, which is how they are sent.
 */
function matchingSchemas(
  call: Call,
  rawArgs: Record<string, unknown>,
  pathValues: Record<string, unknown>,
  given: Params,
): { params: Params } | Failure {
  const { method, describeTool } = call;
  const params: Params = { ...given };
  const violations: Violation[] = [];
  const at = (pointer: string, base: string) => pointer.replace(/^\/value/, base);
  for (const p of method.pathIds) {
    const v = pathValues[p.original];
    if (typeof v === 'object')
      violations.push({ pointer: `/${p.name}`, message: 'must be a string or number' });
    else
      violations.push(
        ...queryValidator
          .check(asValue(p.schema), { value: String(v) }, '')
          .map((x) => ({ ...x, pointer: at(x.pointer, `/${p.name}`) })),
      );
  }
  if (method.body && rawArgs.data !== undefined)
    violations.push(...bodyValidator.check(method.body.schema, rawArgs.data, '/data'));
  for (const p of method.params) {
    if (params[p.name] === undefined) continue;
    const holder = { value: params[p.name] };
    violations.push(
      ...queryValidator
        .check(asValue(p.schema), holder, '')
        .map((v) => ({ ...v, pointer: at(v.pointer, `/params/${escapeToken(p.name)}`) })),
    );
    params[p.name] = holder.value;
  }
  if (violations.length === 0) return { params };
  const shown = violations
    .slice(0, 10)
    .map((v) => `${v.pointer} ${v.message}`)
    .join('; ');
  return failure(
    'malformedRequest',
    `The arguments do not match the API's schema: ${shown}${violations.length > 10 ? ` (and ${violations.length - 10} more)` : ''}. Fix them (see ${describeTool}) and call again.`,
    { violations: violations.slice(0, 50) },
  );
}

/** 5. Path values that would change the request path are refused; the rest become strings. */
function pathKeeping(
  method: MethodEntry,
  pathValues: Record<string, unknown>,
): { pathValues: Record<string, string> } | Failure {
  const out: Record<string, string> = {};
  for (const p of method.pathIds) {
    const value = String(pathValues[p.original]);
    const why = unsafePathValue(value);
    if (why)
      return failure(
        'malformedRequest',
        `Path id '${p.name}' is refused: ${why}, which would change the request path; pass the id alone.`,
        { pointer: `/${p.name}` },
      );
    out[p.original] = value;
  }
  return { pathValues: out };
}

/** 6. Header parameters HTTP cannot carry are refused: a CR/LF would start another header. */
function sendableHeaders(method: MethodEntry, params: Params): Failure | undefined {
  for (const p of method.params) {
    if (p.in !== 'header' || params[p.name] === undefined) continue;
    const why = unsafeHeaderValue(scalar(params[p.name]));
    if (why)
      return failure(
        'malformedRequest',
        `params.${p.name} is refused: ${why}, which an HTTP header cannot carry; remove it and call again.`,
        { pointer: `/params/${escapeToken(p.name)}` },
      );
  }
  return undefined;
}

/**
 * 7. Text no URL can carry: a path id or param with an unpaired surrogate
 * has no UTF-8 form (the body is JSON, which escapes it).
 */
function sendableText(pathValues: Params, params: Params): Failure | undefined {
  const stack: [string[], unknown][] = [
    ...Object.entries(pathValues).map(([k, v]): [string[], unknown] => [[k], v]),
    ...Object.entries(params).map(([k, v]): [string[], unknown] => [['params', k], v]),
  ];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [at, value] = top;
    if (typeof value === 'string' && unpairedSurrogate(value))
      return failure(
        'malformedRequest',
        `${at.join('.')} is refused: it contains an unpaired UTF-16 surrogate, which has no UTF-8 form to send; send well-formed text.`,
        { pointer: `/${at.map(escapeToken).join('/')}` },
      );
    if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) stack.push([[...at, k], v]);
  }
  return undefined;
}
