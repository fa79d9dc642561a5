/**
 * `iterate`: collects a paginated list across pages, up to `limit` items,
 * → `{items, count, truncated}`. `truncated` is true when items were left:
 * the last page had more than were taken, or another page was announced.
 */
import { failure, type Failure } from '../../../kernel/index.js';
import type { Pagination } from '../catalog.js';
import type { UpstreamRequest, UpstreamResponse } from './send.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const MAX_PAGES = 1000;

export interface IterateResult {
  items: unknown[];
  count: number;
  truncated: boolean;
}

export function at(body: unknown, path: string | undefined): unknown {
  if (path === undefined) return undefined;
  if (path === '') return body;
  let node = body;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The `rel="next"` target of a Link header (RFC 8288). */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /<([^>]*)>\s*;(.*)/.exec(part.trim());
    if (m && /rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?/i.test(m[2]!)) return m[1];
  }
  return undefined;
}

export interface PageFetcher {
  /** The first request, with these query parameters. */
  first(params: Record<string, unknown>): UpstreamRequest;
  /** A follow-up request to a full URL (Link header), same origin only. */
  follow(url: URL): UpstreamRequest;
  send(request: UpstreamRequest): Promise<UpstreamResponse | Failure>;
}

export async function iterate(
  pagination: Pagination,
  params: Record<string, unknown>,
  limit: number,
  pageSizeMax: number | undefined,
  fetcher: PageFetcher,
  label: string,
): Promise<IterateResult | Failure> {
  const items: unknown[] = [];
  const query = { ...params };
  const { sizeParam } = pagination;
  if (sizeParam && query[sizeParam] === undefined)
    query[sizeParam] = Math.min(limit, pageSizeMax ?? 100);
  const pageSize = sizeParam ? Number(query[sizeParam]) : undefined;
  let request = fetcher.first(query);
  const seen = new Set<string>();
  let page = typeof query.page === 'number' ? query.page : 1;
  let offset = typeof query.offset === 'number' ? query.offset : 0;
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const response = await fetcher.send(request);
    if ('ok' in response) return response;
    if (response.status >= 400)
      return failure(
        'upstreamError',
        `${label} answered HTTP ${response.status} ${response.statusText} on page ${pages + 1} (after ${items.length} items).`,
        { status: response.status, body: response.body },
      );
    const found = at(response.body, pagination.items);
    const pageItems = Array.isArray(found) ? found : [];
    const room = limit - items.length;
    items.push(...pageItems.slice(0, room));

    // What the next page is, if there is one.
    let next: UpstreamRequest | undefined;
    const more = pagination.more ? at(response.body, pagination.more) : undefined;
    if (pagination.style === 'link') {
      const link = nextLink(response.headers.get('link'));
      if (link) {
        const url = new URL(link, request.url);
        if (url.origin !== request.url.origin)
          return failure(
            'upstreamError',
            `${label}: the next-page link points to another origin (${url.origin}); only the base URL's origin is contacted.`,
          );
        next = fetcher.follow(url);
      }
    } else if (pagination.style === 'page') {
      if (pageItems.length > 0 && (pageSize === undefined || pageItems.length >= pageSize))
        next = fetcher.first({ ...query, [pagination.param ?? 'page']: ++page });
    } else if (pagination.style === 'offset') {
      offset += pageItems.length;
      if (pageItems.length > 0 && (pageSize === undefined || pageItems.length >= pageSize))
        next = fetcher.first({ ...query, [pagination.param ?? 'offset']: offset });
    } else {
      const last = pageItems[pageItems.length - 1] as Record<string, unknown> | undefined;
      const cursor = pagination.next ? at(response.body, pagination.next) : last?.id;
      const announced = pagination.style === 'hasMore' || pagination.more ? more === true : true;
      const fullPage = pagination.next || pageSize === undefined || pageItems.length >= pageSize;
      if (
        announced &&
        fullPage &&
        pageItems.length > 0 &&
        cursor !== undefined &&
        cursor !== null &&
        cursor !== '' &&
        pagination.param
      ) {
        const key = JSON.stringify(cursor);
        if (!seen.has(key)) {
          seen.add(key);
          next = fetcher.first({ ...query, [pagination.param]: cursor });
        }
      }
    }

    if (items.length >= limit)
      return {
        items,
        count: items.length,
        truncated: pageItems.length > room || next !== undefined,
      };
    if (!next) return { items, count: items.length, truncated: false };
    request = next;
  }
  return { items, count: items.length, truncated: true };
}
