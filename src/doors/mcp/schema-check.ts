/**
 * Checking arguments against an upstream tool's own JSON Schema before they
 * are forwarded, with the kernel's wording: each ajv error becomes a zod
 * issue on its field, so the validate stage answers `malformedRequest`
 * ("'path' must be string; got the number 5") as for every other door.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import { describeValue } from '../../kernel/index.js';

export type ArgumentCheck = (args: Record<string, unknown>) => ArgumentIssue[];

export interface ArgumentIssue {
  path: (string | number)[];
  message: string;
}

const draft2020 = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const draft7 = new Ajv({ strict: false, allErrors: false, validateFormats: false });

function pathOf(error: ErrorObject): (string | number)[] {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return path;
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let at: unknown = root;
  for (const key of path) at = (at as Record<string | number, unknown> | undefined)?.[key];
  return at;
}

function issueOf(error: ErrorObject, args: unknown): ArgumentIssue {
  const path = pathOf(error);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return {
      path: [...path, String(params.missingProperty)],
      message: 'must be given (it is required)',
    };
  if (error.keyword === 'additionalProperties')
    return {
      path,
      message: `unknown field '${String(params.additionalProperty)}'${path.length ? ` in ${path.join('.')}` : ''}; remove it`,
    };
  const got = describeValue(valueAt(args, path));
  return { path, message: `${error.message ?? 'is invalid'}; got ${got}` };
}

/**
 * A check for one schema; a schema ajv cannot compile checks only that the
 * arguments are an object (the upstream then judges them itself).
 */
/**
 * The check of one tool's arguments, compiled at its first call: an upstream
 * of 10,000 tools is not 10,000 compiled validators in memory (issue 28).
 */
export function compileCheck(schema: Record<string, unknown>): ArgumentCheck {
  let check: ArgumentCheck | null = null;
  return (args) => (check ??= compileNow(schema))(args);
}

function compileNow(schema: Record<string, unknown>): ArgumentCheck {
  let validate: ValidateFunction;
  try {
    // Without its $id: the same upstream lists the same schema again after a restart.
    const { $id: _id, ...anonymous } = schema;
    const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
    validate = (/draft-0[4-7]/.test(draft) ? draft7 : draft2020).compile(anonymous);
  } catch {
    return () => [];
  }
  return (args) => {
    if (validate(args)) return [];
    return (validate.errors ?? []).slice(0, 1).map((e) => issueOf(e, args));
  };
}
