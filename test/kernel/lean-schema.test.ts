/**
 * Lean published schemas (issue 17): the same constraints in fewer
 * characters — checked by validating the same instances against the zod
 * schema's full JSON Schema and the lean one with a real JSON Schema
 * validator (ajv, draft 2020-12).
 */
import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { leanOutputSchema, leanSchema } from '../../src/kernel/calls/lean-schema.js';
import { jsonSchemaOf } from '../../src/kernel/kernel.js';

const ajv = new Ajv2020({ strict: false, validateFormats: false });
const uuid = '0b0f6c8e-6d53-4d0e-9f57-2d1c3c7b8a11';

const Node = z
  .object({
    id: z.uuid(),
    label: z.string().max(200),
    size: z.object({ width: z.number().int().positive(), height: z.number().int().positive() }),
    tags: z.array(z.string()).max(10),
  })
  .strict();
const Input = z
  .object({
    add: z.object({ page: z.uuid(), node: Node }).strict().optional(),
    replace: z.object({ old: Node, next: Node }).strict().optional(),
    count: z.number().int(),
    mode: z.enum(['a', 'b']).default('a'),
  })
  .strict();

describe('leanSchema', () => {
  const full = jsonSchemaOf(Input);
  const lean = leanSchema(full);

  it('is shorter: no $schema (2020-12 is MCP’s default), no ±2^53−1 bounds, UUIDs as format, repeated parts shared once', () => {
    const text = JSON.stringify(lean);
    expect(text.length).toBeLessThan(JSON.stringify(full).length * 0.7);
    expect(text).not.toContain('$schema');
    expect(text).not.toContain('9007199254740991');
    expect(
      JSON.stringify(
        leanSchema({
          type: 'string',
          pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
        }),
      ),
    ).toBe('{"type":"string","format":"uuid"}');
    // The node schema is written once and referenced three times.
    expect(text.match(/"tags":\{/g)).toHaveLength(1);
    expect(text.match(/"\$ref":"#\/\$defs\/shared\d+"/g)!.length).toBeGreaterThanOrEqual(3);
  });

  it('accepts and refuses the same instances as the full schema', () => {
    const node = { id: uuid, label: 'n', size: { width: 1, height: 2 }, tags: ['x'] };
    const instances = [
      { count: 1 },
      { count: 1, add: { page: uuid, node } },
      { count: 1, replace: { old: node, next: { ...node, label: 'm' } } },
      { count: 1.5 },
      { count: 1, add: { page: uuid, node: { ...node, extra: true } } },
      { count: 1, replace: { old: node, next: { ...node, size: { width: 0, height: 1 } } } },
      { count: 1, mode: 'c' },
      { count: 1, unknown: 1 },
    ];
    const a = ajv.compile(full);
    const b = ajv.compile(lean);
    const verdicts = instances.map((i) => [a(i), b(i)]);
    for (const [full, lean] of verdicts) expect(lean).toBe(full);
    expect(verdicts.map(([v]) => v)).toEqual([true, true, true, false, false, false, false, false]);
  });

  it('leaves data (default, const, enum) as it is', () => {
    const big = Array.from({ length: 30 }, (_, i) => `value-${i}`);
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'string', enum: big, default: 'value-0' },
        b: { type: 'string', enum: big, default: 'value-0' },
      },
    };
    const out = leanSchema(schema) as { properties: Record<string, { enum?: unknown }> };
    // Each property is a repeated schema and may be shared, but the enum values are intact.
    expect(JSON.stringify(out)).toContain('value-29');
    expect(ajv.compile(out)({ a: 'value-3', b: 'nope' })).toBe(false);
    expect(ajv.compile(out)({ a: 'value-3', b: 'value-4' })).toBe(true);
  });

  it('leaves out a property marked x-unpublished and opens its object, so a call using it still validates', () => {
    const Tagged = z
      .object({
        addNode: Node.optional(),
        AddNode: Node.optional().meta({ 'x-unpublished': true }),
        prev: z.unknown().optional().meta({ 'x-unpublished': true }),
      })
      .strict();
    const out = leanSchema(jsonSchemaOf(Tagged));
    const text = JSON.stringify(out);
    expect(text).not.toContain('AddNode');
    expect(text).not.toContain('"prev"');
    expect(text).not.toContain('x-unpublished');
    const node = { id: uuid, label: 'n', size: { width: 1, height: 2 }, tags: [] };
    const check = ajv.compile(out);
    expect(check({ AddNode: node, prev: 1 })).toBe(true);
    expect(check({ addNode: { ...node, label: 5 } })).toBe(false);
    // The tool itself still accepts both and refuses an unknown field.
    expect(Tagged.safeParse({ AddNode: node, prev: 1 }).success).toBe(true);
    expect(Tagged.safeParse({ Unknown: 1 }).success).toBe(false);
  });

  it('with a depth, details objects only that deep: deeper ones are published as {type: object}', () => {
    const Deep = z
      .object({ op: z.object({ add: z.object({ page: z.uuid(), node: Node }).strict() }).strict() })
      .strict();
    const out = leanSchema(jsonSchemaOf(Deep), 2) as {
      properties: { op: { properties: { add: { properties: Record<string, unknown> } } } };
    };
    const add = out.properties.op.properties.add;
    expect(add.properties.page).toMatchObject({ type: 'string', format: 'uuid' });
    expect(add.properties.node).toEqual({ type: 'object' });
    // Still closed where it is detailed.
    expect(ajv.compile(out)({ op: { add: { page: uuid, node: {} } } })).toBe(true);
    expect(ajv.compile(out)({ op: { add: { page: uuid, node: {}, x: 1 } } })).toBe(false);
    // A recursive definition stays a reference, drawn once.
    const Op: z.ZodType = z.lazy(() =>
      z.object({ batch: z.array(Op).optional(), name: z.string().optional() }).strict(),
    );
    const recursive = leanSchema(jsonSchemaOf(z.object({ op: Op }).strict()), 3);
    expect(JSON.stringify(recursive)).toContain('"$ref"');
    expect(ajv.compile(recursive)({ op: { batch: [{ name: 'a' }] } })).toBe(true);
  });

  it('publishes an output schema as an outline every result of the full schema still matches', () => {
    const Output = z.object({
      id: z.uuid(),
      status: z.enum(['queued', 'done']),
      progress: z.object({ step: z.string().nullable(), percent: z.number().min(0).max(100) }),
      tags: z.array(z.string()).max(3),
    });
    const full = jsonSchemaOf(Output);
    const out = leanOutputSchema(full);
    expect(out).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string' },
        status: { type: 'string' },
        progress: { type: 'object' },
        tags: { type: 'array' },
      },
    });
    const result = { id: uuid, status: 'done', progress: { step: null, percent: 5 }, tags: ['a'] };
    expect(ajv.compile(full)(result)).toBe(true);
    expect(ajv.compile(out)(result)).toBe(true);
    // A tuple's closing `items: false` never survives without its prefixItems.
    const tuple = leanOutputSchema(
      jsonSchemaOf(z.object({ c: z.tuple([z.number(), z.number()]) })),
    );
    expect(ajv.compile(tuple)({ c: [1, 2] })).toBe(true);
  });
});
