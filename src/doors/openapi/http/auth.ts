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
 * `configuredSecrets` names every secret value and what it is for, so the
 * door can refuse one it cannot scrub and scrub the rest from everything it
 * shows (secrets.ts); none is ever logged.
 */
import type { SecurityScheme } from '../catalog.js';
import type { ConfiguredSecret } from '../secrets.js';

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

/** A scheme's secret and the variable it came from. */
interface SchemeSecret {
  value: string;
  variable: string;
}

function secretFor(
  source: AuthSource,
  name: string,
  scheme: SecurityScheme,
): SchemeSecret | undefined {
  for (const variable of envNamesFor(source.prefix, name, scheme)) {
    const value = source.env[variable];
    if (value) return { value, variable };
  }
  if (scheme.type === 'http' && scheme.scheme === 'basic') {
    const p = upperSnake(source.prefix);
    const user = source.env[`${p}_USERNAME`];
    const password = source.env[`${p}_PASSWORD`];
    if (user && password) return { value: `${user}:${password}`, variable: `${p}_PASSWORD` };
  }
  return undefined;
}

/** What a scheme's secret is sent as, for messages. */
function sentAs(scheme: SecurityScheme, variable: string): string {
  if (scheme.type === 'apiKey') {
    const where = scheme.in === 'query' ? 'query parameter' : scheme.in;
    return `${where} '${scheme.name}' (${variable})`;
  }
  if (scheme.type === 'http' && scheme.scheme === 'basic')
    return `header 'Authorization' (basic, ${variable})`;
  return `header 'Authorization' (bearer, ${variable})`;
}

/**
 * Every configured secret value, with what it is for. Basic auth's
 * `user:password` is a secret as a whole and its password alone (the API
 * may echo either); the base64 the header carries is one of the forms
 * secrets.ts scrubs.
 */
export function configuredSecrets(source: AuthSource): ConfiguredSecret[] {
  const out: ConfiguredSecret[] = [];
  for (const [name, scheme] of Object.entries(source.schemes)) {
    const secret = secretFor(source, name, scheme);
    if (!secret) continue;
    const about = sentAs(scheme, secret.variable);
    if (scheme.type === 'http' && scheme.scheme === 'basic') {
      const colon = secret.value.indexOf(':');
      // With an empty password (an API key as the user name, Stripe style) the user name is the secret.
      const alone = colon < 0 ? '' : secret.value.slice(colon + 1) || secret.value.slice(0, colon);
      if (alone) out.push({ value: alone, source: about });
      out.push({ value: secret.value, source: about });
    } else {
      const inHeader = scheme.type !== 'apiKey' || scheme.in === 'header';
      out.push({ value: secret.value, source: about, inHeader });
    }
  }
  return out;
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
      return scheme ? { name, scheme, secret: secretFor(source, name, scheme)?.value } : undefined;
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
