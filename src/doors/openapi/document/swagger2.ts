/**
 * Swagger 2.0 mapped onto the OpenAPI 3 view: `host`/`basePath`/`schemes`
 * become one server URL, a `body` parameter and `formData` parameters become
 * the request body, a non-body parameter's schema keywords (kept on the
 * parameter itself) become its schema, and `collectionFormat` becomes
 * `style`/`explode`.
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
import type { BodyView, OperationView, ParameterView } from './view.js';

export function swaggerServers(root: Obj): string[] {
  const base = typeof root.basePath === 'string' ? root.basePath : '';
  if (typeof root.host !== 'string') return base ? [base] : [];
  const scheme =
    Array.isArray(root.schemes) && typeof root.schemes[0] === 'string' ? root.schemes[0] : 'https';
  return [`${scheme}://${root.host}${base}`];
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

/** `formData` parameters, gathered into one object schema. */
interface FormFields {
  properties: Obj;
  required: string[];
}

/** `docConsumes` is the document's `consumes`, used where the operation has none of its own. */
export function swaggerOperation(source: OperationSource, docConsumes: string[]): OperationView {
  const { resolver, op } = source;
  const parameters: ParameterView[] = [];
  let body: BodyView | undefined;
  const form: FormFields = { properties: {}, required: [] };
  const consumes = Array.isArray(op.consumes) ? op.consumes.map(String) : docConsumes;
  for (const { p, loc } of mergedParameters(source)) {
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
      parameters.push(swaggerParameter(p, schema));
    }
  }
  if (!body && Object.keys(form.properties).length > 0) body = formBody(form, consumes);
  const success = successResponse(source);
  const response =
    success && isObject(success.node.schema)
      ? resolver.schema(success.node.schema, {
          doc: success.loc.doc,
          pointer: pointerOf(success.loc.pointer, 'schema'),
        })
      : undefined;
  return operationView(source, success, { parameters, body, response });
}

/**
 * A path, query or header parameter (Swagger 2.0 has no cookie parameters);
 * an unknown location reads as query.
 */
function swaggerParameter(p: Obj, schema: unknown): ParameterView {
  const cf = p.collectionFormat;
  return {
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
  };
}

/** `formData` fields as one body: multipart when the operation consumes it, else URL-encoded. */
function formBody(form: FormFields, consumes: string[]): BodyView {
  const multipart = consumes.some((c) => /multipart\/form-data/i.test(c));
  return {
    required: form.required.length > 0,
    contentType: multipart ? 'multipart/form-data' : 'application/x-www-form-urlencoded',
    schema: {
      type: 'object',
      properties: form.properties,
      ...(form.required.length ? { required: form.required } : {}),
    },
  };
}
