/**
 * Stage 1, validate: the tool's zod schema decides; the first problem is
 * reported as `malformedRequest` naming the field and what to send instead.
 * Arguments nested deeper than the JSON cap are refused before zod walks them.
 */
import type { z } from 'zod';
import { failure, type Failure } from './errors.js';
import { checkNesting } from './json-depth.js';

export function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '';
  if (issue.code === 'unrecognized_keys') {
    const where = path ? ` in ${path}` : '';
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}${where}; remove ${issue.keys.length > 1 ? 'them' : 'it'}`;
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return `missing required field '${path}'`;
  }
  return path ? `field '${path}': ${issue.message}` : issue.message;
}

export function validateInput<S extends z.ZodType>(
  schema: S,
  raw: unknown,
): { ok: true; value: z.output<S> } | Failure {
  // zod walks the value recursively: a value nested thousands deep would overflow the stack.
  const tooDeep = checkNesting(raw);
  if (tooDeep) return tooDeep;
  const result = schema.safeParse(raw ?? {});
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues;
  const first = issues[0];
  const detail = first ? describeIssue(first) : 'the arguments do not match the input schema';
  const more =
    issues.length > 1
      ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})`
      : '';
  return failure(
    'malformedRequest',
    `Invalid arguments: ${detail}${more}. Fix it and call again.`,
    {
      issues: issues.map((i) => ({
        path: i.path.map(String).join('.'),
        code: i.code,
        message: describeIssue(i),
      })),
    },
  );
}
