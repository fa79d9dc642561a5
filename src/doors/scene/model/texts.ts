/**
 * Bulk text export/import (`GET|PUT projects/current/texts?format=json|csv`):
 * one row per text node (`pageId, pageName, nodeId, text, translation`).
 * An import is one batch, so one undo reverts it and a bad row applies
 * nothing. In JSON a missing field is left alone and `null` clears it; in
 * CSV an empty cell clears.
 */
import { z } from 'zod';
import { AirlockError, uuidString } from '../../../kernel/index.js';
import type { Scene } from './model.js';
import type { Op } from './ops.js';

export const TextRow = z
  .object({
    pageId: uuidString().optional(),
    pageName: z.string().optional(),
    nodeId: uuidString(),
    text: z.string().nullable().optional(),
    translation: z.string().nullable().optional(),
  })
  .strict();
export type TextRow = z.output<typeof TextRow>;
export const TextsBody = z.object({ texts: z.array(TextRow).max(100_000) }).strict();

const COLUMNS = ['pageId', 'pageName', 'nodeId', 'text', 'translation'] as const;

export function textRows(scene: Scene): TextRow[] {
  return scene.pages.flatMap((page) =>
    page.nodes.flatMap((node) =>
      'text' in node.kind
        ? [
            {
              pageId: page.id,
              pageName: page.name,
              nodeId: node.id,
              text: node.kind.text.text ?? null,
              translation: node.kind.text.translation ?? null,
            },
          ]
        : [],
    ),
  );
}

const cell = (v: string | null | undefined) => {
  const s = v ?? '';
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

export function toCsv(rows: TextRow[]): string {
  return (
    [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => cell(r[c])).join(','))].join('\r\n') +
    '\r\n'
  );
}

/** RFC 4180 CSV (quoted fields, doubled quotes, CRLF or LF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((f) => f !== ''));
}

export function rowsFromCsv(text: string): TextRow[] {
  const [header, ...rows] = parseCsv(text.replace(/^\uFEFF/, ''));
  if (!header || !header.includes('nodeId'))
    throw new AirlockError(
      'malformedRequest',
      `The CSV needs a header row with nodeId (columns: ${COLUMNS.join(', ')}).`,
    );
  return rows.map((cells, line) => {
    const get = (name: string) => {
      const i = header.indexOf(name);
      return i < 0 ? undefined : (cells[i] ?? '');
    };
    const parsed = TextRow.safeParse({
      nodeId: get('nodeId'),
      ...(get('pageId') ? { pageId: get('pageId') } : {}),
      ...(get('text') !== undefined ? { text: get('text') || null } : {}),
      ...(get('translation') !== undefined ? { translation: get('translation') || null } : {}),
    });
    if (!parsed.success)
      throw new AirlockError(
        'malformedRequest',
        `CSV row ${line + 2}: nodeId and pageId must be UUIDs; fix the row and retry.`,
      );
    return parsed.data;
  });
}

/** One updateNode per row; the page is looked up when a row does not name it. */
export function importOps(scene: Scene, rows: TextRow[]): Op[] {
  return rows.flatMap((row): Op[] => {
    const page =
      row.pageId ?? scene.pages.find((p) => p.nodes.some((n) => n.id === row.nodeId))?.id;
    if (!page)
      throw new AirlockError(
        'notFound',
        `No text node ${row.nodeId} in the project; export the texts (GET projects/current/texts) for the current ids.`,
        {
          nodeId: row.nodeId,
        },
      );
    const text: Record<string, string | null> = {};
    if (row.text !== undefined) text.text = row.text;
    if (row.translation !== undefined) text.translation = row.translation;
    if (!Object.keys(text).length) return [];
    return [{ updateNode: { page, id: row.nodeId, patch: { data: { text } } } }];
  });
}
