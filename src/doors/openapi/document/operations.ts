/**
 * One view of every operation, whatever the document's version: OpenAPI
 * 3.0/3.1 as written (`openapi3.ts`), Swagger 2.0 mapped onto the same shape
 * (`swagger2.ts`: body and formData parameters become the request body,
 * `definitions` are reached by their own `$ref`s, `securityDefinitions`
 * become security schemes). What both read alike is in `operation-parts.ts`;
 * the view's types are in `view.ts`.
 */
import { isObject } from '../../../kernel/index.js';
import { DocumentError, pointerOf } from './errors.js';
import { openapiOperation, openapiServers } from './openapi3.js';
import { securityOf, securitySchemes, type Obj } from './operation-parts.js';
import type { Location, Resolver } from './refs.js';
import { swaggerOperation, swaggerServers } from './swagger2.js';
import type { DocumentView } from './view.js';

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

/** Throws unless the document says it is Swagger 2.0 or OpenAPI 3.0/3.1; true for Swagger. */
function isSwagger(root: Obj, label: string): boolean {
  const swagger = typeof root.swagger === 'string';
  if (!swagger && typeof root.openapi !== 'string')
    throw new DocumentError(
      label,
      '',
      'not an OpenAPI 3.x or Swagger 2.0 document (no openapi or swagger field)',
    );
  if (swagger && !String(root.swagger).startsWith('2'))
    throw new DocumentError(
      label,
      '/swagger',
      `Swagger ${String(root.swagger)} is not supported (2.0 is)`,
    );
  if (!swagger && !/^3\.[01]/.test(String(root.openapi)))
    throw new DocumentError(
      label,
      '/openapi',
      `OpenAPI ${String(root.openapi)} is not supported (3.0 and 3.1 are)`,
    );
  return swagger;
}

export function readDocument(resolver: Resolver): DocumentView {
  const doc = resolver.main;
  const root = doc.root as Obj;
  const swagger = isSwagger(root, doc.label);
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
    servers: swagger ? swaggerServers(root) : openapiServers(root),
    securitySchemes: securitySchemes(
      swagger ? root.securityDefinitions : components.securitySchemes,
    ),
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
      const source = { resolver, path, method, op, item, at, itemLoc };
      view.operations.push(swagger ? swaggerOperation(source, consumes) : openapiOperation(source));
    }
  }
  return view;
}
