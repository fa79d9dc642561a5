/**
 * The catalog compiler: an OpenAPI 3.0/3.1 or Swagger 2.0 document in, the
 * catalog out (spec/openapi.md "The catalog"). Deterministic: resources are
 * sorted by path, methods in a fixed order, nothing depends on time or
 * on where the file lives, so the same document gives byte-identical JSON.
 */
import { createHash } from 'node:crypto';
import {
  CATALOG_FORMAT,
  type Catalog,
  type CatalogMethod,
  type CatalogParam,
  type CatalogPathId,
} from '../catalog.js';
import { loadDocuments, type DocumentSet, type LoadOptions } from '../document/load.js';
import { Resolver } from '../document/refs.js';
import { readDocument } from '../document/operations.js';
import type { OperationView, SecurityScheme } from '../document/view.js';
import { kindOf, nameOperations, pathIdName } from './naming.js';
import { compactSchema, cut, objectShape, typeString, type NameOf } from './types.js';
import { detectPagination } from './pagination.js';
import { exampleOf } from './example.js';
import { quickCheck } from './quick-check.js';

export const MAX_BODY_FIELDS = 80;
const DESCRIPTION_MAX = 300;

/** Reads and compiles a document (path or URL). */
export async function compileSpec(source: string, options: LoadOptions = {}): Promise<Catalog> {
  return compileDocuments(await loadDocuments(source, options));
}

export function compileDocuments(set: DocumentSet): Catalog {
  const resolver = new Resolver(set);
  const view = readDocument(resolver);
  const nameOf: NameOf = (s) => resolver.nameOf(s);
  const names = nameOperations(view.operations);
  const memo = new WeakMap<object, unknown>();
  const check = quickCheck;
  const resources = new Map<string, CatalogMethod[]>();
  const docSecurity = JSON.stringify(view.security);

  for (const op of view.operations) {
    const naming = names.get(`${op.http} ${op.path}`)!;
    const method = compileMethod(op, naming.method, view.securitySchemes, nameOf, check, memo);
    if (op.security !== undefined && JSON.stringify(op.security) !== docSecurity)
      method.security = op.security;
    resources.set(naming.resource, [...(resources.get(naming.resource) ?? []), method]);
  }

  const paths = [...resources.keys()].sort(compare);
  return {
    format: CATALOG_FORMAT,
    source: {
      title: view.title,
      version: view.version,
      spec: view.format,
      sha256: createHash('sha256').update(set.main.text).digest('hex'),
    },
    servers: view.servers,
    securitySchemes: view.securitySchemes,
    security: view.security,
    resources: paths.map((path) => ({ path, methods: resources.get(path)!.sort(byMethodOrder) })),
  };
}

/** The catalog file's bytes. */
export function catalogJson(catalog: Catalog): string {
  return `${JSON.stringify(catalog, null, 2)}\n`;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const ORDER = [
  'list',
  'iterate',
  'create',
  'retrieve',
  'update',
  'replace',
  'delete',
  'bulkDelete',
];
function byMethodOrder(a: CatalogMethod, b: CatalogMethod): number {
  const [i, j] = [ORDER.indexOf(a.name), ORDER.indexOf(b.name)];
  if (i >= 0 || j >= 0) return (i < 0 ? ORDER.length : i) - (j < 0 ? ORDER.length : j);
  return compare(a.name, b.name);
}

const short = (text: string | undefined) => {
  const t = text?.replace(/\s+/g, ' ').trim();
  return t ? cut(t, DESCRIPTION_MAX) : undefined;
};

function isAuthParam(
  p: { name: string; in: string },
  schemes: Record<string, SecurityScheme>,
): boolean {
  if (p.in === 'header' && p.name.toLowerCase() === 'authorization') return true;
  return Object.values(schemes).some(
    (s) => s.type === 'apiKey' && s.in === p.in && s.name.toLowerCase() === p.name.toLowerCase(),
  );
}

function allowedValues(schema: unknown): CatalogParam['allowed'] {
  const s = schema as { enum?: unknown; items?: { enum?: unknown } } | undefined;
  const list = Array.isArray(s?.enum)
    ? s.enum
    : Array.isArray(s?.items?.enum)
      ? s.items.enum
      : undefined;
  return list?.filter(
    (v): v is string | number | boolean | null =>
      v === null || ['string', 'number', 'boolean'].includes(typeof v),
  );
}

function compileMethod(
  op: OperationView,
  name: string,
  schemes: Record<string, SecurityScheme>,
  nameOf: NameOf,
  check: (schema: unknown, value: unknown) => boolean,
  memo: WeakMap<object, unknown>,
): CatalogMethod {
  const example = (schema: unknown) => {
    const withExamples = exampleOf(schema, { useExamples: true, check });
    return check(schema, withExamples)
      ? withExamples
      : exampleOf(schema, { useExamples: false, check });
  };

  // Path ids in URL order, named without `_id`, the original name kept.
  const pathIds: CatalogPathId[] = [];
  const used = new Set(['data', 'params']);
  for (const original of [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)) {
    if (pathIds.some((p) => p.original === original)) continue;
    const param = op.parameters.find((p) => p.in === 'path' && p.name === original);
    let publicName = pathIdName(original);
    if (used.has(publicName)) publicName = original;
    used.add(publicName);
    used.add(original);
    const schema = param?.schema ?? { type: 'string' };
    const description = short(param?.description);
    pathIds.push({
      name: publicName,
      original,
      type: typeString(schema, nameOf, 1),
      ...(description ? { description } : {}),
      schema: compactSchema(schema, true, memo),
    });
  }

  const params: CatalogParam[] = op.parameters
    .filter((p) => p.in !== 'path' && !isAuthParam(p, schemes))
    .map((p) => {
      const allowed = allowedValues(p.schema);
      const description = short(p.description);
      return {
        name: p.name,
        in: p.in as CatalogParam['in'],
        required: p.required,
        type: typeString(p.schema, nameOf, 1),
        ...(description ? { description } : {}),
        ...(allowed && allowed.length > 0 ? { allowed } : {}),
        ...(p.style ? { style: p.style } : {}),
        ...(p.explode !== undefined ? { explode: p.explode } : {}),
        schema: compactSchema(p.schema, true, memo),
      };
    });

  let body: CatalogMethod['body'];
  if (op.body) {
    const shape = objectShape(op.body.schema);
    const fields = shape.properties
      .filter(([, s]) => s.readOnly !== true)
      .map(([field, s]) => {
        const description = short(typeof s.description === 'string' ? s.description : undefined);
        return {
          name: field,
          type: typeString(s, nameOf),
          required: shape.required.has(field),
          ...(description ? { description } : {}),
        };
      });
    body = {
      required: op.body.required,
      contentType: op.body.contentType,
      type: typeString(op.body.schema, nameOf, 1),
      fields: fields.slice(0, MAX_BODY_FIELDS),
      ...(fields.length > MAX_BODY_FIELDS ? { moreFields: fields.length - MAX_BODY_FIELDS } : {}),
      schema: compactSchema(op.body.schema, true, memo),
    };
  }

  const args: Record<string, unknown> = {};
  for (const p of pathIds) {
    const param = op.parameters.find((q) => q.in === 'path' && q.name === p.original);
    args[p.name] = example(param?.schema ?? { type: 'string' });
  }
  if (op.body) args.data = example(op.body.schema);
  const requiredParams = op.parameters.filter(
    (p) => p.required && p.in !== 'path' && !isAuthParam(p, schemes),
  );
  if (requiredParams.length > 0)
    args.params = Object.fromEntries(requiredParams.map((p) => [p.name, example(p.schema)]));

  const pagination =
    op.http === 'GET'
      ? detectPagination(
          op.parameters.filter((p) => p.in === 'query'),
          op.response,
          op.responseHeaders,
        )
      : undefined;

  return {
    name,
    kind: kindOf(op.http, name),
    summary: op.summary || `${op.http} ${op.path}`,
    http: op.http,
    path: op.path,
    ...(op.operationId ? { operationId: op.operationId } : {}),
    pathIds,
    ...(body ? { body } : {}),
    params,
    returns: op.response === undefined ? 'void' : typeString(op.response, nameOf),
    ...(pagination ? { pagination } : {}),
    example: args,
  };
}
