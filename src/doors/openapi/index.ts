/**
 * Door `openapi` (spec/openapi.md): any REST API described by an OpenAPI
 * 3.0/3.1 or Swagger 2.0 document, through three generic tools per mount,
 * Plane-compatible (`plane_resources`, `plane_describe`, `plane_call`).
 * Every export here is a promise.
 */
import type { DoorContext } from '../context.js';
import type { ServedDoor } from '../../transport/surface.js';
import { createOpenapiDoor, DEFAULT_PREFIX } from './door.js';
import { loadCatalog } from './load-catalog.js';
import { DocumentError } from './document/errors.js';
import { ConfigError } from './config-error.js';
import { MountOptionsSchema, type MountOptions } from './config.js';

export { createOpenapiDoor, DEFAULT_PREFIX, type OpenapiDoorOptions } from './door.js';
export { compileSpec, catalogJson } from './compile/compile.js';
export { loadCatalog } from './load-catalog.js';
export { DocumentError } from './document/errors.js';
export type { Catalog } from './catalog.js';
export { MountOptionsSchema, type MountOptions } from './config.js';

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
