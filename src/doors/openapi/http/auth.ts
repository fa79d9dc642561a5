/**
 * Credentials per the document's security schemes (spec/openapi.md "Calling
 * the API safely"): API key in a header, query or cookie, bearer, basic.
 * Secrets come only from environment variables:
 *
 * | scheme                     | variables (prefix `plane`, scheme `api_key`)           |
 * |----------------------------|--------------------------------------------------------|
 * | any                        | `PLANE_API_KEY` — the scheme name, upper snake case    |
 * | apiKey                     | also `PLANE_API_KEY`                                   |
 * | http bearer, oauth2, OIDC  | also `PLANE_TOKEN` (sent as `Authorization: Bearer …`) |
 * | http basic                 | `<…>` as `user:password`, or `PLANE_USERNAME` + `PLANE_PASSWORD` |
 *
 * Every secret value is also returned in `secrets`, so results can be
 * scrubbed of it; none is ever logged.
 */
import type { SecurityScheme } from '../catalog.js';

export interface Credentials {
  headers: Record<string, string>;
  query: [string, string][];
  cookies: string[];
}

export const upperSnake = (text: string) =>
  text
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toUpperCase();

export interface AuthSource {
  prefix: string;
  schemes: Record<string, SecurityScheme>;
  env: NodeJS.ProcessEnv;
}

/** The env variables a scheme reads, most specific first. */
export function envNamesFor(prefix: string, name: string, scheme: SecurityScheme): string[] {
  const p = upperSnake(prefix);
  const own = `${p}_${upperSnake(name)}`;
  if (scheme.type === 'apiKey') return [own, `${p}_API_KEY`];
  if (scheme.type === 'http' && scheme.scheme === 'basic') return [own];
  return [own, `${p}_TOKEN`];
}

function secretFor(source: AuthSource, name: string, scheme: SecurityScheme): string | undefined {
  for (const v of envNamesFor(source.prefix, name, scheme)) {
    const value = source.env[v];
    if (value) return value;
  }
  if (scheme.type === 'http' && scheme.scheme === 'basic') {
    const p = upperSnake(source.prefix);
    const user = source.env[`${p}_USERNAME`];
    const password = source.env[`${p}_PASSWORD`];
    if (user && password) return `${user}:${password}`;
  }
  return undefined;
}

/** Every configured secret value (for scrubbing results and errors). */
export function configuredSecrets(source: AuthSource): string[] {
  const out = new Set<string>();
  for (const [name, scheme] of Object.entries(source.schemes)) {
    const s = secretFor(source, name, scheme);
    if (s) {
      out.add(s);
      if (scheme.type === 'http' && scheme.scheme === 'basic')
        out.add(Buffer.from(s).toString('base64'));
    }
  }
  return [...out];
}

/**
 * Credentials for one operation: the first security alternative whose
 * schemes all have secrets configured. None (or only the anonymous `{}`
 * alternative): no credentials, and the API decides.
 */
export function credentialsFor(source: AuthSource, alternatives: string[][]): Credentials {
  const creds: Credentials = { headers: {}, query: [], cookies: [] };
  for (const alt of alternatives) {
    const values = alt.map((name) => {
      const scheme = source.schemes[name];
      return scheme ? { name, scheme, secret: secretFor(source, name, scheme) } : undefined;
    });
    // Anonymous access is the fallback, not the first choice, when credentials are configured.
    if (alt.length === 0) continue;
    if (values.some((v) => !v?.secret)) continue;
    for (const v of values) {
      const { scheme, secret } = v!;
      if (scheme.type === 'apiKey') {
        if (scheme.in === 'header') creds.headers[scheme.name] = secret!;
        else if (scheme.in === 'query') creds.query.push([scheme.name, secret!]);
        else creds.cookies.push(`${scheme.name}=${encodeURIComponent(secret!)}`);
      } else if (scheme.type === 'http' && scheme.scheme === 'basic') {
        creds.headers.Authorization = `Basic ${Buffer.from(secret!).toString('base64')}`;
      } else {
        creds.headers.Authorization = `Bearer ${secret!}`;
      }
    }
    return creds;
  }
  return creds;
}
