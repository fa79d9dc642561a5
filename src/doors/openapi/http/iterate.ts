/**
 * `iterate`: collects a paginated list across pages, up to `limit` items,
 * → `{items, count, truncated}`. `truncated` is true when items were left:
 * the last page had more than were taken, or another page was announced.
 * The iteration also ends, with a `warning`, when the next page would leave
 * the base URL (scope.ts: it is not followed, the credentials go nowhere
 * else) or repeats a page already fetched; a page without items ends it too.
 */
import { failure, type Failure } from '../../../kernel/index.js';
import type { Pagination } from '../catalog.js';
import type { UpstreamRequest, UpstreamResponse } from './send.js';
import { outsideBase } from './scope.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
const MAX_PAGES = 1000;

export interface IterateResult {
  items: unknown[];
  count: number;
  truncated: boolean;
  /** Why the iteration ended before the API said it was done. */
  warning?: string;
}

/** A page's URL with its query sorted, so the same page is known again. */
function pageKey(url: URL): string {
  const query = new URLSearchParams(url.searchParams);
  query.sort();
  return `${url.origin}${url.pathname}?${query.toString()}`;
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
  /** A follow-up request to a full URL (Link header), already checked to be under the base URL. */
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
  const fetched = new Set<string>();
  let page = typeof query.page === 'number' ? query.page : 1;
  let offset = typeof query.offset === 'number' ? query.offset : 0;
  for (let pages = 1; pages <= MAX_PAGES; pages++) {
    fetched.add(pageKey(request.url));
    const response = await fetcher.send(request);
    if ('ok' in response) return response;
    if (response.status >= 400)
      return failure(
        'upstreamError',
        `${label} answered HTTP ${response.status} ${response.statusText} on page ${pages} (after ${items.length} items); the error's data holds its answer: fix the request, or call again with a smaller limit.`,
        { status: response.status, body: response.body },
      );
    const found = at(response.body, pagination.items);
    const pageItems = Array.isArray(found) ? found : [];
    const room = limit - items.length;
    items.push(...pageItems.slice(0, room));

    // What the next page is, if there is one.
    let next: UpstreamRequest | undefined;
    // Why a next page the API named is not fetched.
    let refused: { warning: string; truncated: boolean } | undefined;
    const more = pagination.more ? at(response.body, pagination.more) : undefined;
    if (pagination.style === 'link') {
      const link = nextLink(response.headers.get('link'));
      if (link && pageItems.length > 0) {
        const url = URL.canParse(link, request.url) ? new URL(link, request.url) : undefined;
        const outside = url ? outsideBase(url, request.base) : 'an unreadable URL';
        if (outside || !url)
          refused = {
            truncated: true,
            warning: `Stopped after page ${pages}: the next-page link points to ${outside}. It is not followed: requests, and the credentials they carry, go only under the base URL ${request.base.href}.`,
          };
        else next = fetcher.follow(url);
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
      )
        next = fetcher.first({ ...query, [pagination.param]: cursor });
    }
    // A page named again (a Link to itself, a cursor that does not move) would repeat forever.
    if (next && fetched.has(pageKey(next.url))) {
      next = undefined;
      refused = {
        truncated: false,
        warning: `Stopped after page ${pages}: the next page the API named was already fetched in this iteration, so these are all the items it gives.`,
      };
    }
    const warning = refused ? { warning: refused.warning } : {};

    if (items.length >= limit)
      return {
        items,
        count: items.length,
        truncated: pageItems.length > room || next !== undefined || refused?.truncated === true,
        ...warning,
      };
    if (!next)
      return { items, count: items.length, truncated: refused?.truncated === true, ...warning };
    request = next;
  }
  return { items, count: items.length, truncated: true };
}
