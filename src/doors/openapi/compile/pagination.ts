/**
 * Whether and how a list paginates (spec/openapi.md): a Link header,
 * `has_more`, a next cursor in the body, page/per_page, or offset/limit.
 * Detection reads the query parameters and the success response only.
 */
import { isObject } from '../../../kernel/index.js';
import type { Pagination } from '../catalog.js';
import { objectShape } from './types.js';

const SIZE = [
  'per_page',
  'page_size',
  'pageSize',
  'perPage',
  'limit',
  'size',
  'max_results',
  'maxResults',
  'count',
];
const CURSOR_PARAMS = [
  'cursor',
  'page_token',
  'pageToken',
  'next_token',
  'nextToken',
  'starting_after',
  'after',
  'continuation',
  'marker',
  'offset',
];
const NEXT_FIELDS = [
  'next_cursor',
  'nextCursor',
  'next_page_token',
  'nextPageToken',
  'next_token',
  'nextToken',
  'cursor',
  'next',
];
const ITEM_FIELDS = [
  'results',
  'data',
  'items',
  'records',
  'entries',
  'values',
  'list',
  'elements',
];
const MORE_FIELDS = ['has_more', 'hasMore', 'next_page_results', 'has_next', 'hasNext'];

const typeIs = (s: unknown, t: string) =>
  isObject(s) && (s.type === t || (Array.isArray(s.type) && s.type.includes(t)));

const isArraySchema = (s: unknown) =>
  typeIs(s, 'array') || (isObject(s) && s.items !== undefined && s.type === undefined);

/** Dotted path of the item array in a response body ('' for a bare array), if any. */
export function itemsPath(response: unknown): string | undefined {
  if (isArraySchema(response)) return '';
  if (!isObject(response)) return undefined;
  const { properties } = objectShape(response);
  const arrays = properties.filter(([, s]) => isArraySchema(s)).map(([k]) => k);
  return (
    ITEM_FIELDS.find((f) => arrays.includes(f)) ?? (arrays.length === 1 ? arrays[0] : undefined)
  );
}

/** Next-cursor field of a response body: `next_cursor`, or `next_page.offset` style objects. */
function nextField(response: unknown, cursorParam: string | undefined): string | undefined {
  const { properties } = objectShape(response);
  const names = new Map(properties);
  for (const f of NEXT_FIELDS) {
    const s = names.get(f);
    if (s && !isArraySchema(s) && !typeIs(s, 'object') && f !== 'next') return f;
  }
  for (const f of ['next_page', 'nextPage', 'next', 'pagination', 'meta', 'paging']) {
    const s = names.get(f);
    if (!s) continue;
    const inner = new Map(objectShape(s).properties);
    for (const g of [
      ...(cursorParam ? [cursorParam] : []),
      'offset',
      'cursor',
      'next_cursor',
      'nextCursor',
      'after',
      'token',
    ])
      if (inner.has(g)) return `${f}.${g}`;
  }
  return undefined;
}

export function detectPagination(
  query: { name: string; schema: unknown }[],
  response: unknown,
  headers: string[],
): Pagination | undefined {
  const items = itemsPath(response);
  if (items === undefined) return undefined;
  const names = new Map(query.map((q) => [q.name, q.schema]));
  const sizeParam = SIZE.find((s) => names.has(s));
  const size = sizeParam ? { sizeParam } : {};
  const cursorParam = CURSOR_PARAMS.find(
    (c) => names.has(c) && !(c === 'offset' && typeIs(names.get(c), 'integer')),
  );
  const { properties } = objectShape(response);
  const fields = new Set(properties.map(([k]) => k));
  const more = MORE_FIELDS.find((f) => fields.has(f));
  const next = items === '' ? undefined : nextField(response, cursorParam);
  if (headers.includes('link')) return { style: 'link', items, ...size };
  if (more && (cursorParam || next)) {
    return {
      style: 'hasMore',
      items,
      ...(cursorParam ? { param: cursorParam } : {}),
      ...size,
      ...(next ? { next } : {}),
      more,
    };
  }
  if (next && cursorParam) return { style: 'cursor', items, param: cursorParam, ...size, next };
  if (
    names.has('page') &&
    (typeIs(names.get('page'), 'integer') || typeIs(names.get('page'), 'number'))
  )
    return { style: 'page', items, param: 'page', ...size };
  if (names.has('offset') && sizeParam) return { style: 'offset', items, param: 'offset', ...size };
  // Item-id cursors (`?after=<last id>&limit=`), Discord style.
  if (cursorParam && sizeParam && (cursorParam === 'after' || cursorParam === 'starting_after'))
    return { style: 'cursor', items, param: cursorParam, ...size };
  return undefined;
}
