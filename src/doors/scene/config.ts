/**
 * The door's section of the config file (`scene`), apart from the door so
 * the CLI checks it before anything starts:
 * `{projectRoots: [dir…], prefix: 'koharu', llm: {baseUrl, apiKey, model, timeoutMs}, compactEvery}`.
 */
import { z } from 'zod';

export const SceneConfig = z
  .object({
    projectRoots: z.array(z.string().min(1)).min(1).optional(),
    prefix: z
      .string()
      .regex(/^[A-Za-z][\w-]*$/)
      .optional(),
    llm: z
      .object({
        baseUrl: z.string().optional(),
        apiKey: z.string().optional(),
        model: z.string().optional(),
        timeoutMs: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    /** Compact each project's op log after this many entries. */
    compactEvery: z.number().int().positive().optional(),
  })
  .strict();
export type SceneConfig = z.infer<typeof SceneConfig>;
