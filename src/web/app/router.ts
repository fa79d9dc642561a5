/**
 * Hash routes (`#/notes/doc/<id>`), so the server serves one page at `/` and
 * every screen has a link that survives a reload.
 */
export interface Route {
  screen: string;
  params: string[];
  query: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = raw.split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return {
    screen: parts[0] ?? 'approvals',
    params: parts.slice(1),
    query: new URLSearchParams(search),
  };
}

export function href(screen: string, ...params: string[]): string {
  return `#/${[screen, ...params].map(encodeURIComponent).join('/')}`;
}
