/**
 * What the three tools of one mount share: the catalog index, where and how
 * to call the API (base URL, headers, credentials), defaults, limits, the
 * version probe, and the secrets to scrub from everything shown.
 */
import type { Logger } from '../../kernel/index.js';
import type { CatalogIndex } from './catalog-index.js';
import {
  configuredSecrets,
  credentialsFor,
  type AuthSource,
  type Credentials,
} from './http/auth.js';
import type { FetchLike, UpstreamLimits } from './http/send.js';
import { unsafeHeaderValue } from './http/build.js';
import { ConfigError } from './config-error.js';
import type { MethodEntry } from './catalog-index.js';
import {
  createScrubber,
  refuseUnusable,
  scrubbedLogger,
  type ConfiguredSecret,
} from './secrets.js';

export interface ProbeOptions {
  /** Path (under the base URL) that answers 404 when the API version is missing. */
  path: string;
  /** The typed tools to suggest instead. */
  typedTools: string[];
}

export interface Runtime {
  readonly prefix: string;
  readonly index: CatalogIndex;
  /** Null when neither `--base-url` nor an absolute server URL in the document gives one. */
  readonly base: URL | null;
  readonly defaults: Readonly<Record<string, string>>;
  readonly extraHeaders: Readonly<Record<string, string>>;
  readonly limits: UpstreamLimits;
  readonly fetch?: FetchLike | undefined;
  readonly probe?: ProbeOptions | undefined;
  readonly logger: Logger;
  credentials(method: MethodEntry): Credentials;
  /** Replaces every configured secret, in every form it takes on the wire, with [REDACTED] (secrets.ts). */
  scrub(text: string): string;
  tool(name: 'resources' | 'describe' | 'call'): string;
}

export interface RuntimeOptions {
  prefix: string;
  index: CatalogIndex;
  baseUrl?: string | undefined;
  headers?: Record<string, string> | undefined;
  defaults?: Record<string, string> | undefined;
  env: NodeJS.ProcessEnv;
  limits: UpstreamLimits;
  fetch?: FetchLike | undefined;
  probe?: ProbeOptions | undefined;
  logger: Logger;
}

/** `${VAR}` in a header value is read from the environment (so secrets stay out of argv). */
export function expandHeaders(
  headers: Record<string, string>,
  env: NodeJS.ProcessEnv,
): { headers: Record<string, string>; secrets: ConfiguredSecret[] } {
  const secrets: ConfiguredSecret[] = [];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, v: string) => {
      const s = env[v] ?? '';
      if (s) secrets.push({ value: s, source: `header '${name}' (\${${v}})`, inHeader: true });
      return s;
    });
    // A literal credential header is a secret too, and so is its value after a scheme word (`Bearer …`).
    if (/authorization|token|key|secret|cookie/i.test(name)) {
      const whole = out[name]!;
      const credential = whole.replace(/^\S+\s+/, '');
      for (const v of new Set([whole, credential]))
        if (v) secrets.push({ value: v, source: `header '${name}'`, inHeader: true });
    }
  }
  return { headers: out, secrets };
}

export function baseUrlOf(index: CatalogIndex, override: string | undefined): URL | null {
  const candidates = override ? [override] : index.catalog.servers;
  for (const c of candidates) {
    try {
      const url = new URL(c);
      if (url.protocol === 'http:' || url.protocol === 'https:') return url;
    } catch {
      /* relative server URL: needs --base-url */
    }
  }
  return null;
}

export function createRuntime(options: RuntimeOptions): Runtime {
  const { index, env, prefix } = options;
  const auth: AuthSource = { prefix, schemes: index.catalog.securitySchemes, env };
  const expanded = expandHeaders(options.headers ?? {}, env);
  const secrets = [...configuredSecrets(auth), ...expanded.secrets];
  refuseUnusable(secrets);
  for (const [name, value] of Object.entries(expanded.headers)) {
    const why = unsafeHeaderValue(value);
    if (why) throw new ConfigError(`header '${name}': ${why}, which an HTTP header cannot carry.`);
  }
  const scrub = createScrubber(secrets.map((s) => s.value));
  const workspace = env[`${prefix.toUpperCase()}_WORKSPACE_SLUG`];
  return {
    prefix,
    index,
    base: baseUrlOf(index, options.baseUrl),
    defaults: { ...(workspace ? { slug: workspace } : {}), ...options.defaults },
    extraHeaders: expanded.headers,
    limits: options.limits,
    fetch: options.fetch,
    probe: options.probe,
    logger: scrubbedLogger(options.logger, scrub),
    credentials: (method) => credentialsFor(auth, method.security ?? index.catalog.security),
    scrub,
    tool: (name) => `${prefix}_${name}`,
  };
}
