/**
 * Door `openapi` (spec/openapi.md): any REST API described by an OpenAPI
 * 3.0/3.1 or Swagger 2.0 document, through three generic tools per mount,
 * Plane-compatible (`plane_resources`, `plane_describe`, `plane_call`).
 * Every export here is a promise.
 */
import type { DoorContext } from '../context.js';
import type { Door } from '../../kernel/door.js';
import { createOpenapiDoor, DEFAULT_PREFIX } from './door.js';
import { loadCatalog } from './load-catalog.js';

export const available = true;

export { createOpenapiDoor, DEFAULT_PREFIX, type OpenapiDoorOptions } from './door.js';
export { compileSpec, catalogJson } from './compile/compile.js';
export { loadCatalog } from './load-catalog.js';
export { DocumentError } from './document/errors.js';
export type { Catalog } from './catalog.js';

/** One door per mount (`--openapi SPEC --base-url URL --prefix P`), the mount named by its prefix. */
export async function createOpenapiDoors(ctx: DoorContext): Promise<Door[]> {
  const doors: Door[] = [];
  for (const mount of ctx.openapi) {
    const catalog = await loadCatalog(mount.spec);
    doors.push(
      createOpenapiDoor({
        catalog,
        prefix: mount.prefix ?? DEFAULT_PREFIX,
        baseUrl: mount.baseUrl,
        headers: mount.headers,
        defaults: mount.defaults,
        env: ctx.env,
        logger: ctx.logger.child({ door: 'openapi', mount: mount.prefix ?? DEFAULT_PREFIX }),
      }),
    );
  }
  return doors;
}
