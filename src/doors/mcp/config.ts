/**
 * The door's configuration (spec/gateway.md "Configuration"): the config
 * file's `upstreams` section and the `--upstream` / `--upstream-header`
 * flags, which build the same shape. Types are derived from the zod schemas.
 *
 * @example
 * parseUpstreamFlag('fs=npx -y @modelcontextprotocol/server-filesystem /tmp')
 * // ['fs', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] }]
 */
import { z } from 'zod';

/** Upstream names: no separator (`_`) in them, so `NAME_tool` reads one way, and usable as a URI scheme part. */
export const UPSTREAM_NAME = /^[A-Za-z][A-Za-z0-9-]{0,31}$/;

export const EffectSchema = z.enum(['read', 'write', 'destructive']);

const common = {
  /** Per upstream tool (its own name): the effect Airlock assumes instead of the annotations'. */
  tools: z.record(z.string(), z.object({ effect: EffectSchema }).strict()).default({}),
  /** Names of environment variables whose values are scrubbed from results, errors and logs. */
  secrets: z.array(z.string().min(1)).default([]),
  /** `eager` connects at start; `lazy` publishes the tools listed last time and connects at the first call. */
  start: z.enum(['eager', 'lazy']).default('eager'),
  /**
   * Audit reads that the policy let through by default too (the default: one
   * trail of everything forwarded). `false` audits only changes, refusals and
   * calls a rule decided, sparing a durable store write per read.
   */
  auditReads: z.boolean().default(true),
  /**
   * `pin` (default): a tool whose definition changed since the owner's review,
   * or that appeared after it, is served destructive until reviewed again;
   * `annotations`: the upstream's annotations are believed as they come.
   */
  trust: z.enum(['pin', 'annotations']).default('pin'),
  /**
   * What the upstream may ask of the calling agent's client during a call
   * (spec/gateway.md §2 "Requests from the upstream"); all refused by default.
   */
  allow: z
    .object({
      sampling: z.boolean().optional(),
      formElicitation: z.boolean().optional(),
      roots: z.boolean().optional(),
    })
    .strict()
    .default({}),
  /** Bounds on what the upstream sends (spec/gateway.md §2 "Bounded"). */
  limits: z
    .object({
      /** One message from the upstream over this is discarded as it streams (`resultTooLarge`). */
      upstreamMessageBytes: z.number().int().min(1024).optional(),
    })
    .strict()
    .default({}),
  /** Between the upstream's name and its tool's (`fs_read_text_file`). */
  separator: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,3}$/, 'must be 1 to 3 of the characters A-Z a-z 0-9 _ . -')
    .default('_'),
};

export const StdioUpstreamSchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().min(1).optional(),
    ...common,
  })
  .strict();

/** `upstreams.NAME.oauth` (spec/gateway.md §1 "OAuth upstreams"). */
export const OAuthSchema = z
  .object({
    /** Scopes to ask for; default: those the upstream's protected-resource metadata lists. */
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be one OAuth scope token'))
      .optional(),
    /**
     * A client ID metadata document (CIMD) the owner hosts: used as the
     * client id when the upstream's authorization server supports CIMD, else
     * Airlock registers itself dynamically (RFC 7591).
     */
    clientMetadataUrl: z
      .string()
      .url()
      .refine((u) => {
        const url = new URL(u);
        return url.protocol === 'https:' && url.pathname !== '/';
      }, 'must be an https:// URL with a path')
      .optional(),
    /** A client the owner registered at the upstream's authorization server beforehand (no CIMD, no registration). */
    clientId: z.string().min(1).optional(),
    /** Its secret, if it has one; `${VAR}` is read from the environment, and the value is a secret. */
    clientSecret: z.string().min(1).optional(),
  })
  .strict()
  .refine((o) => !o.clientSecret || o.clientId, {
    message: 'clientSecret needs clientId',
    path: ['clientSecret'],
  });

export type OAuthSettings = z.output<typeof OAuthSchema>;

export const HttpUpstreamSchema = z
  .object({
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL'),
    headers: z.record(z.string(), z.string()).default({}),
    /** The upstream requires OAuth: the owner connects it once (Upstreams screen); Airlock is the client. */
    oauth: OAuthSchema.optional(),
    ...common,
  })
  .strict();

export const UpstreamSchema = z.union([StdioUpstreamSchema, HttpUpstreamSchema]);
export const UpstreamsSchema = z.record(
  z.string().regex(UPSTREAM_NAME, 'must be a letter then letters, digits or -, at most 32'),
  UpstreamSchema,
);

export type StdioUpstreamConfig = z.output<typeof StdioUpstreamSchema>;
export type HttpUpstreamConfig = z.output<typeof HttpUpstreamSchema>;
export type UpstreamConfig = z.output<typeof UpstreamSchema>;
/** As written in a config file or built from flags (defaults not yet applied). */
export type UpstreamInput = z.input<typeof UpstreamSchema>;

export const isStdio = (c: UpstreamConfig): c is StdioUpstreamConfig => 'command' in c;

/** A bad upstream configuration; the CLI answers it with exit code 2 and this one line. */
export class UpstreamConfigError extends Error {
  // The workspace turns a door's ConfigError into a usage error (exit 2).
  override name = 'ConfigError';
}

/** Splits a command line into words, honouring '…' and "…" quotes and backslash escapes. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      started = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (quote) throw new UpstreamConfigError(`unclosed ${quote} quote in '${line}'`);
  if (started) words.push(word);
  return words;
}

/** `NAME=COMMAND args…` or `NAME=https://…/mcp`, as `--upstream` and `airlock mcp` take it. */
export function parseUpstreamFlag(value: string): [string, UpstreamInput] {
  const eq = value.indexOf('=');
  const name = eq > 0 ? value.slice(0, eq) : '';
  const rest = eq > 0 ? value.slice(eq + 1).trim() : '';
  if (!UPSTREAM_NAME.test(name) || !rest)
    throw new UpstreamConfigError(
      `--upstream '${value}': write NAME=COMMAND or NAME=https://host/mcp, NAME a letter then letters, digits or - (no _)`,
    );
  if (/^https?:\/\//i.test(rest)) return [name, { url: rest }];
  const [command, ...args] = splitCommand(rest);
  if (!command) throw new UpstreamConfigError(`--upstream '${value}': no command after '='`);
  return [name, { command, args }];
}

/** `NAME:Header: value` (`--upstream-header`). */
export function parseHeaderFlag(value: string): [string, string, string] {
  const m = /^([A-Za-z][A-Za-z0-9-]*):\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(value);
  if (!m)
    throw new UpstreamConfigError(
      `--upstream-header '${value}': write NAME:'Header-Name: value' (e.g. gh:'Authorization: Bearer \${GH_TOKEN}')`,
    );
  return [m[1]!, m[2]!, m[3]!];
}

/** Replaces `${VAR}` with the variable's value; the values used are returned as secrets to scrub. */
export function expandEnv(
  text: string,
  env: NodeJS.ProcessEnv,
  where: string,
): { value: string; used: string[] } {
  const used: string[] = [];
  const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const v = env[name];
    if (v === undefined)
      throw new UpstreamConfigError(
        `${where}: environment variable ${name} is not set; set it or write the value itself`,
      );
    used.push(v);
    return v;
  });
  return { value, used };
}

/** Parses and checks the merged upstreams (config file first, flags override by name). */
export function parseUpstreams(raw: unknown): Record<string, UpstreamConfig> {
  const parsed = UpstreamsSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = ['upstreams', ...(issue?.path ?? []).map(String)].join('.');
    const hint =
      issue?.code === 'invalid_union'
        ? 'give either command (with args, env, cwd) or url (with headers)'
        : (issue?.message ?? 'invalid');
    throw new UpstreamConfigError(`config ${at}: ${hint}`);
  }
  return parsed.data;
}
