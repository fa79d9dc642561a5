/**
 * The scene model (spec/scene.md "Scene model"): zod schemas, types derived.
 * JSON is camelCase; a node's `kind` is externally tagged (`{text: {...}}`),
 * and PascalCase tags (`{Text: {...}}`, as the reference spells enum
 * variants) are accepted and normalised to camelCase.
 */
import { z } from 'zod';
import { hex64String, uuidString } from '../../../kernel/index.js';

const channel = z.number().int().min(0).max(255);
export const Rgba = z.tuple([channel, channel, channel, channel]);

export const Transform = z
  .object({
    x: z.number(),
    y: z.number(),
    width: z.number().min(0),
    height: z.number().min(0),
    rotationDeg: z.number(),
  })
  .strict();
export type Transform = z.infer<typeof Transform>;

export const IMAGE_ROLES = ['source', 'inpainted', 'rendered', 'custom'] as const;
export const MASK_ROLES = ['segment', 'brushInpaint', 'bubble'] as const;

export const ImageData = z
  .object({
    role: z.enum(IMAGE_ROLES),
    blob: hex64String(),
    opacity: z.number().min(0).max(1),
    naturalWidth: z.number().int().min(0),
    naturalHeight: z.number().int().min(0),
    name: z.string().optional(),
  })
  .strict();
export type ImageData = z.infer<typeof ImageData>;

export const MaskData = z.object({ role: z.enum(MASK_ROLES), blob: hex64String() }).strict();
export type MaskData = z.infer<typeof MaskData>;

export const TextAlign = z.enum(['left', 'center', 'right']);
export const TextStyle = z
  .object({
    fontFamilies: z.array(z.string()),
    fontSize: z.number().positive().optional(),
    color: Rgba,
    bold: z.boolean().optional(),
    italic: z.boolean().optional(),
    stroke: z
      .object({ color: Rgba, widthPx: z.number().min(0) })
      .strict()
      .optional(),
    textAlign: TextAlign.optional(),
  })
  .strict();
export type TextStyle = z.infer<typeof TextStyle>;

const Point = z.tuple([z.number(), z.number()]);
export const TextData = z
  .object({
    text: z.string().optional(),
    translation: z.string().optional(),
    confidence: z.number().optional(),
    sourceLang: z.string().optional(),
    direction: z.enum(['horizontal', 'vertical']).optional(),
    linePolygons: z.array(z.array(Point)).optional(),
    fontSizePx: z.number().positive().optional(),
    style: TextStyle.optional(),
  })
  .strict();
export type TextData = z.infer<typeof TextData>;

/**
 * An externally tagged union whose tag may be spelled camelCase or PascalCase;
 * the parsed value always carries the camelCase tag. Exactly one tag is allowed.
 */
export function tagged<T extends Record<string, z.ZodType>>(variants: T, what: string) {
  const shape: Record<string, z.ZodOptional<z.ZodType>> = {};
  for (const [tag, schema] of Object.entries(variants)) {
    // One $defs entry per variant, referenced by both spellings of its tag.
    const named = schema.meta({ id: `${what}.${tag}` });
    shape[tag] = named.optional();
    // Accepted, and left out of the published schema (lean-schema.ts `x-unpublished`).
    shape[pascal(tag)] = named.optional().meta({ 'x-unpublished': true });
  }
  const tags = Object.keys(variants);
  return z
    .object(shape)
    .strict()
    .superRefine((value, ctx) => {
      const present = Object.keys(value).filter((k) => value[k] !== undefined);
      if (present.length !== 1) {
        ctx.addIssue({
          code: 'custom',
          message: `${what} must have exactly one of ${tags.map((t) => `'${t}'`).join(', ')} (camelCase or PascalCase); got ${present.length ? present.map((k) => `'${k}'`).join(', ') : 'none'}`,
        });
      }
    })
    .transform((value) => {
      const key = Object.keys(value).find((k) => value[k] !== undefined)!;
      return { [camel(key)]: value[key] } as {
        [K in keyof T]: { [P in K]: z.output<T[K]> };
      }[keyof T];
    })
    .meta({ minProperties: 1, maxProperties: 1 });
}

export const pascal = (tag: string) => tag[0]!.toUpperCase() + tag.slice(1);
export const camel = (tag: string) => tag[0]!.toLowerCase() + tag.slice(1);

export const NodeKind = tagged({ image: ImageData, mask: MaskData, text: TextData }, 'kind');
export type NodeKind = z.output<typeof NodeKind>;

export const Node = z
  .object({ id: uuidString(), transform: Transform, visible: z.boolean(), kind: NodeKind })
  .strict();
export type Node = z.output<typeof Node>;

export const Page = z
  .object({
    id: uuidString(),
    name: z.string(),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    nodes: z.array(Node),
  })
  .strict();
export type Page = z.output<typeof Page>;

/** Languages OCR reads (`style.sourceLanguage`, `start_pipeline {sourceLanguage}`). */
export const SOURCE_LANGUAGES = ['en', 'ja', 'zh', 'zh-Hant', 'ko'] as const;
export const SourceLanguage = z.enum(SOURCE_LANGUAGES);
export type SourceLanguage = z.output<typeof SourceLanguage>;

export const ProjectStyle = z
  .object({ defaultFont: z.string().optional(), sourceLanguage: SourceLanguage.optional() })
  .strict();

export const ProjectMeta = z
  .object({
    name: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
    style: ProjectStyle,
  })
  .strict();
export type ProjectMeta = z.output<typeof ProjectMeta>;

export const Scene = z.object({ project: ProjectMeta, pages: z.array(Page) }).strict();
export type Scene = z.output<typeof Scene>;

export type NodeKindTag = 'image' | 'mask' | 'text';
export const kindTag = (node: Node): NodeKindTag =>
  'image' in node.kind ? 'image' : 'mask' in node.kind ? 'mask' : 'text';

export const imageOf = (node: Node): ImageData | null =>
  'image' in node.kind ? node.kind.image : null;
export const textOf = (node: Node): TextData | null =>
  'text' in node.kind ? node.kind.text : null;

export function emptyScene(name: string, at: string): Scene {
  return { project: { name, createdAt: at, updatedAt: at, style: {} }, pages: [] };
}
