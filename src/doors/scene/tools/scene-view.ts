/**
 * `koharu.get_scene` within the token budget (issue 17): pages in order
 * until the next would not fit, then a `nextCursor` and a sentence saying
 * how to get the rest; `fields: "text"` keeps only text nodes and their
 * text and translation. A cursor is bound to the scene's epoch and to the
 * request it continues, so paging returns every page exactly once or says
 * the scene changed — never a silent skip or repeat.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AirlockError, failure, uuidString, type Failure } from '../../../kernel/index.js';
import { Scene, type Page } from '../model/model.js';

export const GetSceneInput = z
  .object({
    pages: z.array(uuidString()).max(10_000).optional(),
    fields: z.enum(['all', 'text']).optional(),
    cursor: z.string().min(1).max(512).optional(),
  })
  .strict();
export type GetSceneInput = z.infer<typeof GetSceneInput>;

export const GetSceneView = z.object({
  epoch: z.number().int(),
  scene: Scene,
  nextCursor: z.string().optional(),
  note: z.string().optional(),
});
export type GetSceneView = z.infer<typeof GetSceneView>;

const Cursor = z
  .object({ e: z.number().int(), n: z.number().int().min(1), k: z.string() })
  .strict();

/** What a cursor must continue: the same pages asked and the same fields. */
const requestKey = (pages: string[] | undefined, fields: string) =>
  createHash('sha256')
    .update(`${fields}|${pages?.join(',') ?? '*'}`)
    .digest('base64url')
    .slice(0, 16);

const encode = (c: z.infer<typeof Cursor>) => Buffer.from(JSON.stringify(c)).toString('base64url');

function decode(cursor: string): z.infer<typeof Cursor> {
  try {
    return Cursor.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new AirlockError(
      'malformedRequest',
      "Field 'cursor' is not a cursor get_scene gave; pass nextCursor from the previous answer unchanged, or leave it out to start again.",
      { field: 'cursor' },
    );
  }
}

/** Text nodes only, with their text and translation (and where they are). */
function textOnly(page: Page): Page {
  const nodes = page.nodes.flatMap((node) => {
    if (!('text' in node.kind)) return [];
    const { text, translation } = node.kind.text;
    return [
      {
        ...node,
        kind: {
          text: {
            ...(text !== undefined ? { text } : {}),
            ...(translation ? { translation } : {}),
          },
        },
      },
    ];
  });
  return { ...page, nodes };
}

/** Room left for `{epoch, scene: {project, pages: []}, nextCursor, note}` around the pages. */
const FRAME_CHARS = 1_000;

export function sceneView(
  scene: Scene,
  epoch: number,
  input: GetSceneInput,
  budgetChars: number,
): GetSceneView | Failure {
  const fields = input.fields ?? 'all';
  let selected = scene.pages;
  if (input.pages) {
    const asked = input.pages;
    const missing = asked.find((id) => !scene.pages.some((p) => p.id === id));
    if (missing)
      return failure('notFound', `No page ${missing}; call get_scene without pages to list them.`);
    selected = scene.pages.filter((p) => asked.includes(p.id));
  }
  const key = requestKey(input.pages, fields);
  let start = 0;
  if (input.cursor) {
    const cursor = decode(input.cursor);
    if (cursor.k !== key)
      return failure(
        'malformedRequest',
        'This cursor continues another request (other pages or fields); repeat that request with it, or leave cursor out.',
        { field: 'cursor' },
      );
    if (cursor.e !== epoch)
      return failure(
        'versionConflict',
        `The scene changed since this cursor was given (epoch ${cursor.e}, now ${epoch}); call get_scene again without cursor.`,
        { field: 'cursor', currentEpoch: epoch },
      );
    start = Math.min(cursor.n, selected.length);
  }
  const view = fields === 'text' ? textOnly : (p: Page) => p;
  const budget = budgetChars - FRAME_CHARS - JSON.stringify(scene.project).length;
  const pages: Page[] = [];
  let used = 0;
  let end = start;
  for (; end < selected.length; end++) {
    const page = view(selected[end]!);
    const size = JSON.stringify(page).length + 1;
    if (used + size > budget) break;
    pages.push(page);
    used += size;
  }
  if (pages.length === 0 && end < selected.length) {
    const page = selected[end]!;
    return failure(
      'resultTooLarge',
      fields === 'text'
        ? `Page ${end + 1} (${page.id}) alone holds more text than one answer carries; read its nodes through GET /api/v1/scene.json or export its texts (GET /api/v1/projects/current/texts).`
        : `Page ${end + 1} (${page.id}) alone is larger than one answer carries; ask with fields: "text" for its texts only.`,
      { page: page.id },
    );
  }
  const result: GetSceneView = { epoch, scene: { ...scene, pages } };
  if (end < selected.length) {
    result.nextCursor = encode({ e: epoch, n: end, k: key });
    result.note = `Pages ${start + 1}–${end} of ${selected.length} shown (the answer's token budget); call get_scene again with cursor: nextCursor (and the same pages and fields) for the rest, or narrow with pages or fields: "text".`;
  }
  return result;
}
