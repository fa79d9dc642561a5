/** The door's section of the config file (`openapiOptions`), apart from the door so the CLI checks it before anything starts. */
import { z } from 'zod';

/** The tool prefix of a mount that names none (Plane's API, the seed). */
export const DEFAULT_PREFIX = 'plane';

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
