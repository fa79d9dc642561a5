/**
 * `json_schema_2020_12_tool` (json-schema-2020-12; SEP-1613, SEP-2106): its
 * published input schema must keep `$defs` (an `address` with an `$anchor`),
 * `$ref`, `additionalProperties: false`, `allOf`/`anyOf` and
 * `if`/`then`/`else`. zod has no conditional keywords, so they ride in
 * `.meta()` (which zod copies into the JSON Schema) and the same rules are
 * enforced by a refinement: the kernel validates exactly what is published.
 * zod moves a sub-schema with a registry `id` into `$defs`; the schema is
 * therefore built once, and only when the conformance door is created.
 */
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { defineTool, jsonSchemaOf, type AnyToolDef } from '../../../kernel/index.js';

let cached: AnyToolDef | undefined;

function inputSchema() {
  const address = z
    .object({ street: z.string().optional(), city: z.string().optional() })
    .meta({ id: 'address', $anchor: 'addressDef' });
  return z
    .object({
      name: z.string().optional(),
      address: address.optional(),
      contactMethod: z.enum(['phone', 'email']).optional(),
      phone: z.string().optional(),
      email: z.string().optional(),
    })
    .strict()
    .superRefine((value, ctx) => {
      // allOf/anyOf: a phone or an email; if/then/else: the one contactMethod names (email by default).
      const needed = value.contactMethod === 'phone' ? 'phone' : 'email';
      if (value.phone === undefined && value.email === undefined) {
        ctx.addIssue({ code: 'custom', message: "give 'phone' or 'email'", path: [] });
      } else if (value[needed] === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `contactMethod needs '${needed}'`,
          path: [needed],
        });
      }
    })
    .meta({
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
    });
}

export function jsonSchemaTool(): AnyToolDef {
  const input = inputSchema();
  cached ??= defineTool({
    name: 'json_schema_2020_12_tool',
    description:
      'Tool whose input schema uses JSON Schema 2020-12 $defs, $anchor, allOf/anyOf and if/then/else.',
    input,
    // Published whole, `$schema` included (the scenario checks the dialect is kept).
    inputJsonSchema: jsonSchemaOf(input),
    effect: 'read',
    annotations: { openWorldHint: false },
    handler: async (args): Promise<CallToolResult> => ({
      content: [
        { type: 'text', text: `JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}` },
      ],
    }),
  });
  return cached;
}
