/**
 * Validation messages (authority.md §4): a wrong type is reported as a wrong
 * type, with the field, what it must be and what was sent; a missing field
 * as missing.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { describeIssue, validateInput } from '../../src/kernel/calls/validate.js';
import { utf8String, uuidString } from '../../src/kernel/calls/schemas.js';

/** The message of a refused input (the test fails if it was accepted). */
function messageOf(schema: z.ZodType, input: unknown): string {
  const r = validateInput(schema, input);
  if (r.ok) throw new Error(`accepted ${JSON.stringify(input)}`);
  expect(r.code).toBe('malformedRequest');
  return r.message;
}

const Append = z
  .object({
    expectedVersion: z.number().int().min(0),
    limit: z.number().int().min(1).max(100).optional(),
    rect: z
      .object({ x: z.number().int().min(0) })
      .strict()
      .optional(),
  })
  .strict();

describe('wrong types say so', () => {
  it('a string for an integer ≥ 0 names the field, the type and the string', () => {
    expect(messageOf(Append, { expectedVersion: '0' })).toBe(
      'Invalid arguments: \'expectedVersion\' must be an integer ≥ 0; got the string "0". Fix it and call again.',
    );
  });

  it('a fraction, a negative number and null for an integer ≥ 0 each say what was sent', () => {
    expect(messageOf(Append, { expectedVersion: 1.5 })).toContain(
      "'expectedVersion' must be an integer ≥ 0; got the number 1.5",
    );
    expect(messageOf(Append, { expectedVersion: -1 })).toContain(
      "'expectedVersion' must be an integer ≥ 0; got the number -1",
    );
    expect(messageOf(Append, { expectedVersion: null })).toContain(
      "'expectedVersion' must be an integer ≥ 0; got null",
    );
  });

  it('a missing field is still reported as missing', () => {
    expect(messageOf(Append, {})).toContain("missing required field 'expectedVersion'");
  });

  it('a string for a bounded integer names the bounds', () => {
    expect(messageOf(Append, { expectedVersion: 0, limit: '5' })).toContain(
      '\'limit\' must be an integer between 1 and 100; got the string "5"',
    );
    expect(messageOf(Append, { expectedVersion: 0, limit: 500 })).toContain(
      "'limit' must be an integer between 1 and 100; got the number 500",
    );
  });

  it('a fraction in a nested integer names the full path', () => {
    expect(messageOf(Append, { expectedVersion: 0, rect: { x: 0.5 } })).toContain(
      "'rect.x' must be an integer ≥ 0; got the number 0.5",
    );
  });

  it('a string for an object, an array for the arguments: both say what was sent', () => {
    const Apply = z.object({ op: z.object({ addNode: z.object({}) }).strict() }).strict();
    expect(messageOf(Apply, { op: 'add_node' })).toContain(
      '\'op\' must be an object; got the string "add_node"',
    );
    expect(messageOf(Apply, [1, 2])).toContain(
      'the arguments must be an object; got an array of 2 items',
    );
  });

  it('a nullable field says null is allowed too', () => {
    const Versioned = z.object({ expectedVersion: z.number().int().min(0).nullable() }).strict();
    expect(messageOf(Versioned, { expectedVersion: '0' })).toContain(
      '\'expectedVersion\' must be an integer ≥ 0 or null; got the string "0"',
    );
  });

  it('an enum or literal names the allowed values', () => {
    const Kind = z.object({ kind: z.enum(['highlight', 'comment']), v: z.literal(2) }).strict();
    expect(messageOf(Kind, { kind: 'note', v: 2 })).toContain(
      '\'kind\' must be one of "highlight", "comment"; got the string "note"',
    );
    expect(messageOf(Kind, { kind: 'comment', v: '2' })).toContain(
      '\'v\' must be 2; got the string "2"',
    );
  });

  it('a discriminated union names the allowed discriminator values, or that it is missing', () => {
    const Op = z
      .object({
        op: z.discriminatedUnion('type', [
          z.object({ type: z.literal('add_node'), id: z.string() }),
          z.object({ type: z.literal('remove'), id: z.string() }),
        ]),
      })
      .strict();
    expect(messageOf(Op, { op: { type: 'nope', id: 'a' } })).toContain(
      '\'op.type\' must be one of "add_node", "remove"; got the string "nope"',
    );
    expect(messageOf(Op, { op: { id: 'a' } })).toContain(
      'missing required field \'op.type\' (one of "add_node", "remove")',
    );
    expect(messageOf(Op, { op: { type: 'remove', id: 7 } })).toContain(
      "'op.id' must be a string; got the number 7",
    );
  });

  it('a plain union reports the branch the input was meant for, or every type it accepts', () => {
    const Target = z
      .object({
        target: z.union([z.string(), z.object({ x: z.number(), y: z.number() }).strict()]),
      })
      .strict();
    expect(messageOf(Target, { target: { x: 1, y: '2' } })).toContain(
      '\'target.y\' must be a number; got the string "2"',
    );
    expect(messageOf(Target, { target: true })).toContain(
      "'target' must be a string or an object; got the boolean true",
    );
  });

  it('string sizes and formats say what is allowed and what was sent', () => {
    const Named = z
      .object({ name: z.string().max(3), id: z.uuid() })
      .partial()
      .strict();
    expect(messageOf(Named, { name: 'abcdef' })).toContain(
      "'name' must be a string of at most 3 characters; got a string of 6 characters",
    );
    expect(messageOf(Named, { id: 'x' })).toContain('\'id\' must be a UUID; got the string "x"');
  });

  it('a long string is shortened in the message', () => {
    const message = messageOf(Append, { expectedVersion: 'y'.repeat(500) });
    expect(message).toContain(`got the string "${'y'.repeat(40)}…" (500 characters)`);
    expect(message).not.toContain('y'.repeat(41));
  });

  it('the value of a secret-named field is not repeated back', () => {
    const Login = z.object({ password: z.string(), apiToken: z.string() }).strict();
    const message = messageOf(Login, { password: 123456, apiToken: 'x' });
    expect(message).toContain("'password' must be a string; got a number");
    expect(message).not.toContain('123456');
  });

  it('a message the schema author wrote keeps its words and gains the field name', () => {
    const Ids = z.object({ operationID: uuidString(), account: utf8String(1, 4) }).strict();
    expect(messageOf(Ids, { operationID: 'x', account: 'a' })).toContain(
      "'operationID' must be a UUID such as 123e4567-e89b-12d3-a456-426614174000",
    );
    expect(messageOf(Ids, { operationID: crypto.randomUUID(), account: 'abcdef' })).toContain(
      "'account' must be 1 to 4 UTF-8 bytes (got 6)",
    );
  });

  it('every problem is listed with its own message in the failure data', () => {
    const r = validateInput(Append, { expectedVersion: '0', limit: 0 });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.data?.issues).toEqual([
      {
        path: 'expectedVersion',
        code: 'invalid_type',
        message: '\'expectedVersion\' must be an integer ≥ 0; got the string "0"',
      },
      {
        path: 'limit',
        code: 'too_small',
        message: "'limit' must be an integer between 1 and 100; got the number 0",
      },
    ]);
  });

  it('an issue parsed without its input is still not called missing when a value was sent', () => {
    const r = Append.safeParse({ expectedVersion: '0' });
    expect(r.success).toBe(false);
    expect(describeIssue(r.error!.issues[0]!, Append)).toBe(
      "'expectedVersion' must be an integer ≥ 0",
    );
    const missing = Append.safeParse({});
    expect(describeIssue(missing.error!.issues[0]!)).toBe(
      "missing required field 'expectedVersion'",
    );
  });

  it('no value sent in place of an integer is ever reported as a missing field', () => {
    const notAnInteger = fc
      .jsonValue()
      .filter((v) => v !== undefined && !(typeof v === 'number' && Number.isInteger(v)));
    fc.assert(
      fc.property(notAnInteger, (value) => {
        const message = messageOf(Append, { expectedVersion: value });
        expect(message).not.toContain('missing');
        expect(message).toContain("'expectedVersion' must be an integer ≥ 0; got ");
      }),
    );
  });
});

describe('nesting cap in validation', () => {
  it('arguments nested 5,000 levels deep are refused as malformedRequest before zod walks them', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const r = validateInput(z.object({ a: z.unknown() }), { a: deep });
    expect(r).toMatchObject({ ok: false, code: 'malformedRequest', data: { maxDepth: 64 } });
    expect(!r.ok && r.message).toContain('nest deeper than 64 levels');
    expect(!r.ok && r.message).toContain('flatten');
  });
});
