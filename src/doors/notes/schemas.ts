/**
 * Input schemas of the twelve tools (spec/notes.md "Tools"): strict objects
 * (`additionalProperties: false`), every listed field required, byte limits
 * in UTF-8 bytes, UUID ids, 64-lowercase-hex digests.
 */
import { z } from 'zod';
import { hex64String, utf8String, uuidString } from '../../kernel/index.js';

/** A string of `min`…`max` characters (Unicode code points, not UTF-16 units). */
export function charString(min: number, max: number) {
  return z.string().superRefine((value, ctx) => {
    const chars = [...value].length;
    if (chars < min || chars > max) {
      ctx.addIssue({
        code: 'custom',
        message: `must be ${min} to ${max} characters (got ${chars})`,
      });
    }
  });
}

const MILLION = 1_000_000;
const int = (min: number, max: number) => z.number().int().min(min).max(max);

export const Empty = z.object({}).strict();

export const RectSchema = z
  .object({
    x: int(0, MILLION - 1),
    y: int(0, MILLION - 1),
    width: int(1, MILLION),
    height: int(1, MILLION),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.x + r.width > MILLION)
      ctx.addIssue({
        code: 'custom',
        path: ['width'],
        message: 'x + width must be at most 1000000',
      });
    if (r.y + r.height > MILLION)
      ctx.addIssue({
        code: 'custom',
        path: ['height'],
        message: 'y + height must be at most 1000000',
      });
  });

export const DocumentInput = z.object({ documentID: uuidString() }).strict();

export const CreateNoteInput = z
  .object({
    operationID: uuidString(),
    documentID: uuidString(),
    title: charString(1, 200),
    provider: utf8String(0, 64),
    model: utf8String(0, 64),
    promptVersion: utf8String(0, 64),
  })
  .strict();

export const AppendTextInput = z
  .object({
    operationID: uuidString(),
    documentID: uuidString(),
    text: utf8String(1, 6000),
    expectedVersion: z.number().int().min(0),
    provider: utf8String(0, 64),
    model: utf8String(0, 64),
    promptVersion: utf8String(0, 64),
  })
  .strict();

export const PageQuery = z
  .object({
    documentID: uuidString(),
    surfaceID: uuidString(),
    pageIndex: int(0, 999_999),
    rect: RectSchema,
  })
  .strict();

export const AnnotateInput = z
  .object({
    operationID: uuidString(),
    query: PageQuery,
    expectedVersion: z.number().int().min(0),
    sourceAssetID: uuidString(),
    sourceDigest: hex64String(),
    geometryDigest: hex64String(),
    selectionTextDigest: hex64String(),
    kind: z.enum(['highlight', 'underline', 'comment']),
    comment: utf8String(0, 2000),
    provider: utf8String(1, 64),
    model: utf8String(1, 64),
    promptVersion: utf8String(1, 64),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.kind === 'comment' && input.comment.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['comment'],
        message: 'must not be empty when kind is comment',
      });
    }
  });

export const QueryOperationInput = z
  .object({ documentID: uuidString(), operationID: uuidString() })
  .strict();

export type CreateNote = z.output<typeof CreateNoteInput>;
export type AppendText = z.output<typeof AppendTextInput>;
export type Annotate = z.output<typeof AnnotateInput>;
export type Rect = z.output<typeof RectSchema>;
