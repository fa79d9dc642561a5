/**
 * Where a request may go (spec/openapi.md "Calling the API safely"): only
 * the configured base URL's origin, and only under its path. Every request
 * carries the credentials, so the first one, each next-page link and each
 * redirect is checked here before it is sent.
 */

/** Why `url` lies outside `base`, or null when it is inside. */
export function outsideBase(url: URL, base: URL): string | null {
  if (url.origin !== base.origin) return `another origin (${url.origin})`;
  if (url.username || url.password) return 'a URL with user information';
  // A server may decode these into separators after the prefix was checked.
  if (/%2f|%5c|\\/i.test(url.pathname)) return `a path with encoded separators (${url.pathname})`;
  const prefix = base.pathname.replace(/\/+$/, '');
  if (prefix && url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`))
    return `a path outside ${prefix}/ (${url.pathname})`;
  return null;
}
