/**
 * The catalog the door reads (`airlock catalog build SPEC -o catalog.json`):
 * generated, deterministic, never edited by hand. The types come from these
 * schemas; `parseCatalog` checks a catalog file before the door trusts it.
 */
import { z } from 'zod';

export const CATALOG_FORMAT = 'airlock.openapi.catalog/1';

const Scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const PathIdSchema = z.object({
  /** The name `args` use: the spec's parameter without `_id`/`Id`, camelCased. */
  name: z.string(),
  /** The spec's own name, accepted too. */
  original: z.string(),
  type: z.string(),
  description: z.string().optional(),
  schema: z.unknown(),
});

export const ParamSchema = z.object({
  name: z.string(),
  in: z.enum(['query', 'header', 'cookie']),
  required: z.boolean(),
  type: z.string(),
  description: z.string().optional(),
  /** Enumerated values (`fields`, `expand`, `order_by`, filters). */
  allowed: z.array(Scalar).optional(),
  style: z.string().optional(),
  explode: z.boolean().optional(),
  schema: z.unknown(),
});

export const BodyFieldSchema = z.object({
  name: z.string(),
  type: z.string(),
  required: z.boolean(),
  description: z.string().optional(),
});

export const BodySchema = z.object({
  required: z.boolean(),
  contentType: z.string(),
  type: z.string(),
  /** At most 80; `moreFields` counts the rest. */
  fields: z.array(BodyFieldSchema),
  moreFields: z.number().int().optional(),
  schema: z.unknown(),
});

export const PaginationSchema = z.object({
  style: z.enum(['cursor', 'page', 'offset', 'link', 'hasMore']),
  /** Dotted path of the item array in the response body; '' when the body is the array. */
  items: z.string(),
  /** Query parameter carrying the cursor, page number or offset. */
  param: z.string().optional(),
  /** Query parameter for the page size. */
  sizeParam: z.string().optional(),
  /** Dotted path of the next cursor in the response body; absent: the last item's `id`. */
  next: z.string().optional(),
  /** Dotted path of the "more pages" flag. */
  more: z.string().optional(),
});

export const MethodSchema = z.object({
  name: z.string(),
  kind: z.enum(['read', 'write', 'destructive']),
  summary: z.string(),
  http: z.string(),
  path: z.string(),
  operationId: z.string().optional(),
  pathIds: z.array(PathIdSchema),
  body: BodySchema.optional(),
  params: z.array(ParamSchema),
  returns: z.string(),
  pagination: PaginationSchema.optional(),
  /** Security alternatives (scheme names) when they differ from the document's. */
  security: z.array(z.array(z.string())).optional(),
  /** A complete, valid `args` for `<prefix>_call`. */
  example: z.record(z.string(), z.unknown()),
});

export const ResourceSchema = z.object({ path: z.string(), methods: z.array(MethodSchema) });

export const SecuritySchemeSchema = z.union([
  z.object({
    type: z.literal('apiKey'),
    in: z.enum(['header', 'query', 'cookie']),
    name: z.string(),
  }),
  z.object({ type: z.literal('http'), scheme: z.string() }),
  z.object({ type: z.literal('oauth2') }),
  z.object({ type: z.literal('openIdConnect') }),
]);

export const CatalogSchema = z.object({
  format: z.literal(CATALOG_FORMAT),
  source: z.object({
    title: z.string(),
    version: z.string(),
    /** `openapi 3.1.0`, `swagger 2.0`. */
    spec: z.string(),
    /** SHA-256 of the main document's bytes. */
    sha256: z.string(),
  }),
  servers: z.array(z.string()),
  securitySchemes: z.record(z.string(), SecuritySchemeSchema),
  security: z.array(z.array(z.string())),
  resources: z.array(ResourceSchema),
});

export type Catalog = z.infer<typeof CatalogSchema>;
export type CatalogResource = z.infer<typeof ResourceSchema>;
export type CatalogMethod = z.infer<typeof MethodSchema>;
export type CatalogParam = z.infer<typeof ParamSchema>;
export type CatalogPathId = z.infer<typeof PathIdSchema>;
export type Pagination = z.infer<typeof PaginationSchema>;
export type SecurityScheme = z.infer<typeof SecuritySchemeSchema>;

export function isCatalog(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as { format?: unknown }).format === CATALOG_FORMAT
  );
}

/** The catalog as the door uses it, or a one-line reason it is not one. */
export function parseCatalog(
  value: unknown,
): { ok: true; catalog: Catalog } | { ok: false; reason: string } {
  const parsed = CatalogSchema.safeParse(value);
  if (parsed.success) return { ok: true, catalog: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: `/${issue?.path.join('/') ?? ''}: ${issue?.message ?? 'invalid'}` };
}
