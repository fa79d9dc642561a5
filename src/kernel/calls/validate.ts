/**
 * Stage 1, validate: the tool's zod schema decides; the first problem is
 * reported as `malformedRequest` naming the field, what it must be and what
 * was sent ("'expectedVersion' must be an integer ≥ 0; got the string "0"").
 * A wrong type is never reported as a missing field (authority.md §4).
 * Arguments nested deeper than the JSON cap are refused before zod walks them.
 */
import { z } from 'zod';
import { failure, type Failure } from '../errors.js';
import { checkNesting } from './json-depth.js';
import { isSecretName } from '../audit/secret-names.js';
import { expectedOf, formatWord, oneOf, schemaAt, typeWord } from './schema-words.js';

type Issue = z.core.$ZodIssue;
type Schema = z.core.$ZodType;

/** Zod's own English message for an issue, to tell it from one a schema's author wrote. */
const zodMessage = z.locales.en().localeError;

function isAuthored(issue: Issue): boolean {
  // Zod's type message names the received type, which it knows only from the input.
  if (issue.code === 'invalid_type' && !('input' in issue))
    return !issue.message.startsWith('Invalid input: expected ');
  const standard = zodMessage(issue as never);
  const text = typeof standard === 'string' ? standard : standard?.message;
  return text !== undefined && text !== issue.message;
}

const LONG = 40;

/**
 * A value that was sent, in words, for messages that say what was wrong with
 * it: `the string "0"`, `the number 1.5`, `null`, `an array of 2 items`.
 * Long strings are shortened; with `secret` the value itself is not repeated.
 *
 * @example describeValue('0') // 'the string "0"'
 */
export function describeValue(value: unknown, secret = false): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    if (secret) return 'a string';
    if (value.length <= LONG) return `the string ${JSON.stringify(value)}`;
    return `the string ${JSON.stringify(value.slice(0, LONG)).slice(0, -1)}…" (${value.length} characters)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean')
    return secret ? `a ${typeof value}` : `the ${typeof value} ${value}`;
  if (Array.isArray(value))
    return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A size that was too small or too big, in words ("a string of 70 characters"). */
function receivedSize(value: unknown, secret: boolean): string {
  if (typeof value === 'string')
    return `a string of ${value.length} character${value.length === 1 ? '' : 's'}`;
  return describeValue(value, secret);
}

function sizeBound(issue: Extract<Issue, { code: 'too_small' | 'too_big' }>): string {
  const small = issue.code === 'too_small';
  const n = small ? issue.minimum : issue.maximum;
  const unit = issue.origin === 'string' ? 'character' : 'item';
  const units = `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (issue.origin === 'string' || issue.origin === 'array' || issue.origin === 'set') {
    if (issue.exact)
      return `${issue.origin === 'string' ? 'a string' : 'an array'} of exactly ${units}`;
    return `${issue.origin === 'string' ? 'a string' : 'an array'} of ${small ? 'at least' : 'at most'} ${units}`;
  }
  const sign = small ? (issue.inclusive ? '≥' : '>') : issue.inclusive ? '≤' : '<';
  return `${issue.origin === 'int' ? 'an integer' : 'a number'} ${sign} ${n}`;
}

/** The branch of a failed union the input was probably meant for: one whose type it has. */
function closestBranch(branches: readonly Issue[][]): Issue[] | undefined {
  const typed = branches.filter(
    (b) => b.length > 0 && !b.some((i) => i.code === 'invalid_type' && i.path.length === 0),
  );
  return typed.sort((a, b) => a.length - b.length)[0];
}

/**
 * One issue as a sentence naming the field. With the schema and the input
 * that failed (`root`), it also says what the field accepts; the issue needs
 * its `input` (parse with `reportInput: true`) to say what was sent.
 */
export function describeIssue(issue: Issue, schema?: Schema, root?: unknown): string {
  const path = issue.path.map(String).join('.');
  const field = path ? `'${path}'` : 'the arguments';
  const last = issue.path[issue.path.length - 1];
  const secret = typeof last === 'string' && isSecretName(last);
  const got = () => describeValue(issue.input, secret);
  const expected = () => {
    const at = schema ? schemaAt(schema, issue.path, root) : undefined;
    return at ? expectedOf(at) : undefined;
  };
  const authored = () =>
    issue.message.startsWith('must ')
      ? `${field} ${issue.message}`
      : path
        ? `field '${path}': ${issue.message}`
        : issue.message;

  switch (issue.code) {
    case 'unrecognized_keys': {
      const where = path ? ` in ${path}` : '';
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}${where}; remove ${issue.keys.length > 1 ? 'them' : 'it'}`;
    }
    case 'invalid_type': {
      // Without the input (parsed without reportInput) only zod's text tells a missing field.
      const missing =
        'input' in issue ? issue.input === undefined : issue.message.endsWith('received undefined');
      if (missing && path) return `missing required field '${path}'`;
      if (isAuthored(issue)) return authored();
      if (!('input' in issue)) return `${field} must be ${expected() ?? typeWord(issue.expected)}`;
      return `${field} must be ${expected() ?? typeWord(issue.expected)}; got ${got()}`;
    }
    case 'too_small':
    case 'too_big':
      if (isAuthored(issue)) return authored();
      return `${field} must be ${expected() ?? sizeBound(issue)}; got ${receivedSize(issue.input, secret)}`;
    case 'invalid_value':
      if (isAuthored(issue)) return authored();
      return `${field} must be ${oneOf(issue.values)}; got ${got()}`;
    case 'invalid_format':
      if (isAuthored(issue)) return authored();
      return `${field} must be ${issue.format === 'regex' ? `a string matching ${issue.pattern}` : formatWord(issue.format)}; got ${got()}`;
    case 'not_multiple_of':
      if (isAuthored(issue)) return authored();
      return `${field} must be a multiple of ${issue.divisor}; got ${got()}`;
    case 'invalid_union':
      return describeUnion(issue, { field, path, secret, schema, root, expected });
    default:
      return authored();
  }
}

function describeUnion(
  issue: Extract<Issue, { code: 'invalid_union' }>,
  at: {
    field: string;
    path: string;
    secret: boolean;
    schema: Schema | undefined;
    root: unknown;
    expected: () => string | undefined;
  },
): string {
  // A discriminated union names its discriminator in the path; the input is the object holding it.
  if (issue.discriminator !== undefined && 'options' in issue && issue.options) {
    const holder = issue.input;
    const value =
      typeof holder === 'object' && holder !== null
        ? (holder as Record<string, unknown>)[issue.discriminator]
        : undefined;
    const allowed = oneOf(issue.options);
    if (value === undefined) return `missing required field '${at.path}' (${allowed})`;
    return `${at.field} must be ${allowed}; got ${describeValue(value, at.secret)}`;
  }
  const branch = closestBranch(issue.errors);
  const first = branch?.[0];
  if (first) {
    const nested = { ...first, path: [...issue.path, ...first.path] } as Issue;
    return describeIssue(nested, at.schema, at.root);
  }
  if (issue.errors.length === 0 || !('input' in issue)) return `${at.field}: ${issue.message}`;
  const alternatives = [
    ...new Set(
      issue.errors.flatMap((b) =>
        b
          .filter((i) => i.code === 'invalid_type' && i.path.length === 0)
          .map((i) =>
            // invalid_type issues carry `expected`
            typeWord((i as Extract<Issue, { code: 'invalid_type' }>).expected),
          ),
      ),
    ),
  ];
  const words =
    at.expected() ??
    (alternatives.length > 1
      ? `${alternatives.slice(0, -1).join(', ')} or ${alternatives[alternatives.length - 1]}`
      : alternatives[0]);
  return `${at.field} must be ${words ?? 'one of the documented shapes'}; got ${describeValue(issue.input, at.secret)}`;
}

export function validateInput<S extends z.ZodType>(
  schema: S,
  raw: unknown,
): { ok: true; value: z.output<S> } | Failure {
  // zod walks the value recursively: a value nested thousands deep would overflow the stack.
  const tooDeep = checkNesting(raw);
  if (tooDeep) return tooDeep;
  const input = raw ?? {};
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues;
  const first = issues[0];
  const detail = first
    ? describeIssue(first, schema, input)
    : 'the arguments do not match the input schema';
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
        message: describeIssue(i, schema, input),
      })),
    },
  );
}
