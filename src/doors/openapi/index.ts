/**
 * Door `openapi` (spec/openapi.md): any REST API described by an OpenAPI
 * 3.0/3.1 or Swagger 2.0 document, through three generic tools per mount,
 * Plane-compatible (`plane_resources`, `plane_describe`, `plane_call`).
 * Every export here is a promise.
 */
import { z } from 'zod';
import type { DoorContext } from '../context.js';
import type { ServedDoor } from '../../transport/surface.js';
import { createOpenapiDoor, DEFAULT_PREFIX } from './door.js';
import { loadCatalog } from './load-catalog.js';
import { DocumentError } from './document/errors.js';
import { ConfigError } from './config-error.js';

export { createOpenapiDoor, DEFAULT_PREFIX, type OpenapiDoorOptions } from './door.js';
export { compileSpec, catalogJson } from './compile/compile.js';
export { loadCatalog } from './load-catalog.js';
export { DocumentError } from './document/errors.js';
export type { Catalog } from './catalog.js';

/**
 * Per-mount options beyond `--openapi/--base-url/--prefix`, from the config
 * file's `openapiOptions` section, keyed by prefix:
 * `{"openapiOptions": {"plane": {"probe": {"path": "/api/v1/users/me/", "typedTools": ["plane_list_projects"]}}}}`.
 */
export const MountOptionsSchema = z
  .object({
    probe: z
      .object({ path: z.string().min(1), typedTools: z.array(z.string()).default([]) })
      .strict()
      .optional(),
    allowExternalRefs: z.boolean().optional(),
    upstream: z
      .object({
        timeoutMs: z.number().int().positive(),
        maxResponseBytes: z.number().int().positive(),
        maxRetries: z.number().int().min(0).max(10),
        maxRetryDelayMs: z.number().int().min(0),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict();
export type MountOptions = z.infer<typeof MountOptionsSchema>;

function mountOptions(ctx: DoorContext, prefix: string): MountOptions {
  const section = ctx.config.openapiOptions;
  const raw =
    section !== null && typeof section === 'object'
      ? (section as Record<string, unknown>)[prefix]
      : undefined;
  if (raw === undefined) return {};
  const parsed = MountOptionsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(
      `config openapiOptions.${prefix}.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** One door per mount (`--openapi SPEC --base-url URL --prefix P`), the mount named by its prefix. */
export async function createOpenapiDoors(ctx: DoorContext): Promise<ServedDoor[]> {
  const doors: ServedDoor[] = [];
  for (const mount of ctx.openapi) {
    const prefix = mount.prefix ?? DEFAULT_PREFIX;
    const options = mountOptions(ctx, prefix);
    const catalog = await loadCatalog(mount.spec, {
      allowExternalRefs: options.allowExternalRefs === true,
    }).catch((error: unknown) => {
      throw error instanceof DocumentError ? new ConfigError(`--openapi ${error.message}`) : error;
    });
    doors.push(
      createOpenapiDoor({
        catalog,
        prefix,
        baseUrl: mount.baseUrl,
        headers: mount.headers,
        defaults: mount.defaults,
        env: ctx.env,
        logger: ctx.logger.child({ door: 'openapi', mount: prefix }),
        probe: options.probe,
        upstream: options.upstream,
      }),
    );
  }
  return doors;
}
