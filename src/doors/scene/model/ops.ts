/**
 * Scene ops (spec/scene.md "Ops"): externally tagged, camelCase or PascalCase
 * tags, normalised to camelCase. The `prev*` fields the reference required
 * (`prev`, `prevPage`/`prev_page`, …) are accepted and dropped: inverses come
 * from the live state (kernel §7), never from the client.
 */
import { z } from 'zod';
import { hex64String, uuidString } from '../../../kernel/index.js';
import { Node, Page, SourceLanguage, TextStyle, Transform, tagged } from './model.js';

function variant<C extends z.ZodRawShape>(core: C, prevs: readonly string[] = []) {
  const shape = { ...core } as unknown as Record<string, z.ZodType>;
  // Accepted and not published (lean-schema.ts `x-unpublished`): koharu.apply's description says once that they are ignored.
  for (const p of prevs) shape[p] = z.unknown().optional().meta({ 'x-unpublished': true });
  return z
    .object(shape)
    .strict()
    .transform((value) => {
      const out: Record<string, unknown> = { ...value };
      for (const p of prevs) delete out[p];
      return out as z.output<z.ZodObject<C>>;
    });
}

const index = z.number().int().min(0);
const clearable = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

export const ProjectMetaPatch = z
  .object({
    name: z.string().optional(),
    style: z
      .object({ defaultFont: clearable(z.string()), sourceLanguage: clearable(SourceLanguage) })
      .strict()
      .optional(),
  })
  .strict();

export const PagePatch = z
  .object({
    name: z.string().optional(),
    width: z.number().int().positive().optional(),
    height: z.number().int().positive().optional(),
  })
  .strict();

export const TextDataPatch = z
  .object({
    text: clearable(z.string()),
    translation: clearable(z.string()),
    confidence: clearable(z.number()),
    sourceLang: clearable(z.string()),
    direction: clearable(z.enum(['horizontal', 'vertical'])),
    linePolygons: clearable(z.array(z.array(z.tuple([z.number(), z.number()])))),
    fontSizePx: clearable(z.number().positive()),
    style: clearable(TextStyle),
  })
  .strict();

export const ImageDataPatch = z
  .object({
    blob: hex64String().optional(),
    opacity: z.number().min(0).max(1).optional(),
    naturalWidth: z.number().int().min(0).optional(),
    naturalHeight: z.number().int().min(0).optional(),
    name: clearable(z.string()),
  })
  .strict();

export const MaskDataPatch = z.object({ blob: hex64String().optional() }).strict();

/** `role` is not patchable: remove the node and add another to change it. */
export const NodeDataPatch = tagged(
  { text: TextDataPatch, image: ImageDataPatch, mask: MaskDataPatch },
  'data',
);

export const NodePatch = z
  .object({
    transform: Transform.partial().optional(),
    visible: z.boolean().optional(),
    data: NodeDataPatch.optional(),
  })
  .strict();
export type NodePatch = z.output<typeof NodePatch>;

const variants = {
  updateProjectMeta: variant({ patch: ProjectMetaPatch }, ['prev']),
  addPage: variant({ page: Page, at: index.optional() }),
  removePage: variant({ id: uuidString() }, ['prevPage', 'prev_page', 'prevIndex', 'prev_index']),
  updatePage: variant({ id: uuidString(), patch: PagePatch }, ['prev']),
  reorderPages: variant({ order: z.array(uuidString()) }, ['prevOrder', 'prev_order']),
  addNode: variant({ page: uuidString(), node: Node, at: index.optional() }),
  removeNode: variant({ page: uuidString(), id: uuidString() }, [
    'prevNode',
    'prev_node',
    'prevIndex',
    'prev_index',
  ]),
  updateNode: variant({ page: uuidString(), id: uuidString(), patch: NodePatch }, ['prev']),
  reorderNodes: variant({ page: uuidString(), order: z.array(uuidString()) }, [
    'prevOrder',
    'prev_order',
  ]),
};

type Variants = typeof variants;
type SimpleOp = { [K in keyof Variants]: { [P in K]: z.output<Variants[K]> } }[keyof Variants];

/** One scene mutation, normalised (camelCase tag, no `prev*` fields). */
export type Op = SimpleOp | { batch: { ops: Op[]; label: string } };
export type OpTag = keyof Variants | 'batch';

const BatchBody: z.ZodType<{ ops: Op[]; label: string }> = z
  .object({
    get ops(): z.ZodArray<z.ZodType<Op>> {
      return z.array(OpSchema);
    },
    label: z.string().max(200),
  })
  .strict();

export const OpSchema = tagged({ ...variants, batch: BatchBody }, 'op') as unknown as z.ZodType<Op>;

export const opTag = (op: Op): OpTag => Object.keys(op)[0] as OpTag;

/**
 * Every single op kind as policy targets name it (`addNode` → `add_node`); a
 * batch's targets are the kinds inside it (op-policy.ts), never `batch`.
 */
export const OP_KINDS: readonly string[] = Object.keys(variants).map((tag) =>
  tag.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
);

/** Short human label for a single op (history entries, events). */
export function labelOf(op: Op): string {
  return 'batch' in op ? op.batch.label : opTag(op);
}
