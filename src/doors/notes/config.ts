/** The door's section of the config file (`notes`): `{"prefix": "rooqi"}`, the tool-name prefix. */
import { z } from 'zod';

export const NotesConfig = z
  .object({
    prefix: z
      .string()
      .regex(/^[A-Za-z][\w-]*$/, 'must be a letter then letters, digits, _ or -')
      .optional(),
  })
  .strict();
export type NotesConfig = z.infer<typeof NotesConfig>;
