/**
 * OpenAPI 3.0/3.1 as written: server URLs with their variables' defaults,
 * parameters with a `schema` or a `content` map, `requestBody`, and the
 * success response's `content`.
 */
import { isObject } from '../../../kernel/index.js';
import { pointerOf } from './errors.js';
import {
  mergedParameters,
  operationView,
  pickContentType,
  successResponse,
  type Obj,
  type OperationSource,
} from './operation-parts.js';
import type { Location, Resolver } from './refs.js';
import type { BodyView, OperationView, ParameterView } from './view.js';

/** `servers[].url` with each `{variable}` replaced by its default, where it has one. */
export function openapiServers(root: Obj): string[] {
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

export function openapiOperation(source: OperationSource): OperationView {
  const { resolver } = source;
  const parameters = mergedParameters(source).map(({ p, loc }) =>
    openapiParameter(resolver, p, loc),
  );
  const body = requestBody(source);
  const success = successResponse(source);
  let response: unknown;
  if (success && isObject(success.node.content))
    response = contentSchema(resolver, success.node.content, success.loc, undefined);
  return operationView(source, success, { parameters, body, response });
}

function openapiParameter(resolver: Resolver, p: Obj, loc: Location): ParameterView {
  return {
    name: String(p.name),
    in: (['path', 'query', 'header', 'cookie'].includes(String(p.in))
      ? p.in
      : 'query') as ParameterView['in'],
    required: p.in === 'path' || p.required === true,
    description: typeof p.description === 'string' ? p.description : undefined,
    schema: isObject(p.schema)
      ? resolver.schema(p.schema, { doc: loc.doc, pointer: pointerOf(loc.pointer, 'schema') })
      : isObject(p.content)
        ? contentSchema(resolver, p.content, loc, {})
        : {},
    style: typeof p.style === 'string' ? p.style : undefined,
    explode: typeof p.explode === 'boolean' ? p.explode : undefined,
  };
}

/**
 * The request body in its preferred content type; its schema is `{}` when
 * the media type has none.
 */
function requestBody(source: OperationSource): BodyView | undefined {
  const { resolver, op, at } = source;
  if (op.requestBody === undefined) return undefined;
  const r = resolver.deref(op.requestBody, {
    doc: at.doc,
    pointer: pointerOf(at.pointer, 'requestBody'),
  });
  if (!isObject(r.node) || !isObject(r.node.content)) return undefined;
  const contentType = pickContentType(Object.keys(r.node.content));
  if (!contentType) return undefined;
  const media = r.node.content[contentType];
  const schemaAt = {
    doc: r.loc.doc,
    pointer: pointerOf(r.loc.pointer, 'content', contentType, 'schema'),
  };
  return {
    required: r.node.required === true,
    contentType,
    schema:
      isObject(media) && isObject(media.schema) ? resolver.schema(media.schema, schemaAt) : {},
  };
}

/** The resolved schema of the preferred media type in `owner`'s `content` map, else `otherwise`. */
function contentSchema(
  resolver: Resolver,
  content: Obj,
  owner: Location,
  otherwise: unknown,
): unknown {
  const ct = pickContentType(Object.keys(content));
  const media = ct ? content[ct] : undefined;
  return ct && isObject(media) && isObject(media.schema)
    ? resolver.schema(media.schema, {
        doc: owner.doc,
        pointer: pointerOf(owner.pointer, 'content', ct, 'schema'),
      })
    : otherwise;
}
