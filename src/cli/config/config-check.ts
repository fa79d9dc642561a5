/**
 * The whole config file's shape (`--config FILE`), checked before anything
 * starts: an unknown key at any level — the top level, every section, an
 * upstream of the mcp door, a policy rule, an openapi source — is a usage
 * error (exit 2) naming the key, where it is and the closest known key
 * ("unknown key `polcy` at the top level; did you mean `policy`?"), never a
 * setting silently ignored. A value of the wrong type says its path and
 * what to write there.
 */
import { z } from 'zod';
import { PolicyConfigSchema } from '../../kernel/authority/policy.js';
import { PRESENCE_MODES } from '../../kernel/authority/presence.js';
import { RetentionConfigSchema } from '../../kernel/audit/retention.js';
import { closestWord } from '../../kernel/calls/closest.js';
import { describeIssue, describeValue } from '../../kernel/calls/validate.js';
import { schemaAt } from '../../kernel/calls/schema-words.js';
import { UpstreamsSchema } from '../../doors/mcp/config.js';
import { MountOptionsSchema } from '../../doors/openapi/config.js';
import { SceneConfig } from '../../doors/scene/config.js';
import { NotesConfig } from '../../doors/notes/config.js';
import { TOOL_NAME_MODES } from '../../transport/mcp/tool-names.js';
import { MAX_APPROVAL_WAIT_MS } from '../../transport/mcp/approval-delivery.js';
import { TelemetryConfigSchema } from '../../telemetry/settings.js';
import { NOTIFY_EVENTS, WEBHOOK_FORMATS } from '../../notify/formats.js';
import { BatchSecondsSchema, QuietHoursSchema } from '../../notify/quiet.js';
import { UsageError } from '../args.js';

/** `limits`: per door (its mount name), `{"notes": {"timeoutMs": 8000}}`. */
export const LimitsSchema = z.record(
  z.string(),
  z
    .object({
      requestBytes: z.number().int().positive(),
      responseBytes: z.number().int().positive(),
      concurrentCalls: z.number().int().positive(),
      timeoutMs: z.number().int().positive(),
      resultTokens: z.number().int().min(256),
    })
    .partial()
    .strict(),
);

/** `http`: connection timeouts, the per-address connection cap, and how long an idle 2025-era MCP session lives. */
export const HttpSchema = z
  .object({
    headersTimeoutMs: z.number().int().min(100).max(600_000).optional(),
    requestTimeoutMs: z.number().int().min(100).max(3_600_000).optional(),
    maxConnectionsPerAddress: z.number().int().min(1).max(100_000).optional(),
    sessionIdleMs: z.number().int().min(1_000).max(86_400_000).optional(),
  })
  .strict();

/**
 * `approvals`: how long a 2025-era call that showed its card's link waits for
 * the owner — below 60 s, when most clients give up on a request.
 */
export const ApprovalsSchema = z
  .object({
    waitSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_APPROVAL_WAIT_MS / 1000),
    // How long an ask stays for the owner after its agent disconnected.
    orphanMinutes: z
      .number()
      .int()
      .min(1)
      .max(24 * 60),
  })
  .partial()
  .strict();

/** `tools`: the token budget of the whole `/mcp` `tools/list` (mcp door's compact form beyond it). */
export const ToolsListSchema = z
  .object({ listBudgetTokens: z.number().int().min(500).max(10_000_000) })
  .partial()
  .strict();

/** The `tools.listBudgetTokens` of a checked config file, if set. */
export const listBudgetOf = (config: Record<string, unknown>): number | undefined =>
  (config.tools as { listBudgetTokens?: number } | undefined)?.listBudgetTokens;

/** `jobs`: how long a silent instance's jobs stay running (scale-out). */
export const JobsSchema = z.object({ leaseMs: z.number().int().min(1_000).max(600_000) }).strict();

/** `openapi`: the documents to mount, as `--openapi/--base-url/--prefix` give them. */
export const OpenApiMountsSchema = z.array(
  z
    .object({
      spec: z.string().min(1),
      baseUrl: z.string().url().optional(),
      prefix: z
        .string()
        .regex(/^[a-zA-Z][a-zA-Z0-9_]*$/)
        .optional(),
      headers: z.record(z.string(), z.string()).optional(),
      defaults: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
);

/** `owner`: whether decisions need the owner's passkey (issue 25). */
export const OwnerConfigSchema = z
  .object({
    /** `passkey`: every owner decision needs a passkey; `none`: never; unset: once one is enrolled. */
    presence: z.enum(PRESENCE_MODES),
  })
  .partial()
  .strict();

/** `notify`: webhooks and email for new asks and failed jobs (authority.md §6). */
export const NotifySchema = z
  .object({
    webhooks: z.array(
      z
        .object({
          url: z.string().url(),
          events: z.array(z.enum(NOTIFY_EVENTS)).min(1).optional(),
          secret: z.string().min(16).optional(),
          format: z.enum(WEBHOOK_FORMATS).optional(),
        })
        .strict(),
    ),
    allowPrivate: z.array(z.string().url()),
    /** Email (issue 30): the same words and link as a push, through this SMTP server. */
    smtp: z
      .object({
        host: z.string().min(1),
        port: z.number().int().min(1).max(65535).optional(),
        secure: z.boolean().optional(),
        user: z.string().optional(),
        pass: z.string().optional(),
        from: z.string().min(3),
        to: z.array(z.string().email()).min(1),
      })
      .strict(),
    /** No push or email between these hours but for asks of `urgent` rules (authority.md §6.3). */
    quietHours: QuietHoursSchema,
    /** One push/email per agent per this many seconds, with a count (default 60; 0 = off). */
    batchSeconds: BatchSecondsSchema,
  })
  .partial()
  .strict();

/** `oauth` (authority.md §7): Airlock as authorization server for remote MCP clients. */
export const OAuthConfigSchema = z
  .object({
    /** Default true; false: agent tokens only. */
    enabled: z.boolean(),
    /** Clients may register themselves (RFC 7591); default false (metadata documents only). */
    dynamicRegistration: z.boolean(),
    /** Access token lifetime, 1 minute to 1 day (default 60). */
    accessTokenMinutes: z.number().int().min(1).max(1440),
  })
  .partial()
  .strict();

const port = z.union([z.number().int(), z.string()]);

/** Every key the config file may hold; the flags of the same name win over it. */
export const ConfigFileSchema = z
  .object({
    port,
    relayPort: port,
    metricsPort: port,
    host: z.string().min(1),
    token: z.string().min(1),
    allowAnonymous: z.boolean(),
    allowSelf: z.boolean(),
    toolNames: z.enum(TOOL_NAME_MODES as ['exact', 'portable']),
    tools: ToolsListSchema,
    doors: z.union([z.string(), z.array(z.string().min(1))]),
    data: z.string().min(1),
    store: z.string().min(1),
    bus: z.string().min(1),
    publicUrl: z.string().url(),
    runAs: z.string().min(1),
    owner: OwnerConfigSchema,
    limits: LimitsSchema,
    http: HttpSchema,
    jobs: JobsSchema,
    approvals: ApprovalsSchema,
    notify: NotifySchema,
    oauth: OAuthConfigSchema,
    retention: RetentionConfigSchema,
    telemetry: TelemetryConfigSchema,
    policy: PolicyConfigSchema,
    openapi: OpenApiMountsSchema,
    openapiOptions: z.record(z.string(), MountOptionsSchema),
    upstreams: UpstreamsSchema,
    scene: SceneConfig,
    notes: NotesConfig,
  })
  .partial()
  .strict();

type Issue = z.core.$ZodIssue;
type Schema = z.core.$ZodType;
type Path = readonly PropertyKey[];

const pathText = (path: Path) => path.map(String).join('.');

/** Wrappers that do not change a schema's shape. */
function unwrap(schema: Schema | undefined): z.core.$ZodTypes | undefined {
  let s = schema as z.core.$ZodTypes | undefined;
  for (let hops = 0; s && hops < 16; hops++) {
    const def = s._zod.def;
    if (def.type === 'optional' || def.type === 'default' || def.type === 'nullable')
      s = def.innerType as z.core.$ZodTypes;
    else if (def.type === 'pipe') s = def.in as z.core.$ZodTypes;
    else break;
  }
  return s;
}

/**
 * The object schema `value` is checked against: the schema itself, or the
 * option of a union holding most of the value's keys.
 */
function objectOf(schema: Schema | undefined, value: unknown): z.core.$ZodObject | undefined {
  const s = unwrap(schema);
  if (s?._zod.def.type === 'object') return s as z.core.$ZodObject;
  if (s?._zod.def.type !== 'union') return undefined;
  const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  const objects = s._zod.def.options
    .map((o) => objectOf(o, value))
    .filter((o): o is z.core.$ZodObject => o !== undefined);
  const score = (o: z.core.$ZodObject) => keys.filter((k) => k in o._zod.def.shape).length;
  return objects.reduce<z.core.$ZodObject | undefined>(
    (best, o) => (best === undefined || score(o) > score(best) ? o : best),
    undefined,
  );
}

/** The known key an unknown one was meant as: a required key it could abbreviate first (`cmd` → `command`). */
function guessKey(key: string, shape: Record<string, Schema>, value: unknown): string | undefined {
  const present = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  const missing = Object.entries(shape)
    .filter(([k, v]) => !present.includes(k) && v._zod.optin !== 'optional')
    .map(([k]) => k);
  const abbreviates = (word: string) => {
    let at = 0;
    for (const c of word.toLowerCase()) if (key.toLowerCase()[at] === c) at++;
    return at === key.length && word[0]?.toLowerCase() === key[0]?.toLowerCase();
  };
  return (
    closestWord(key, missing) ?? missing.find(abbreviates) ?? closestWord(key, Object.keys(shape))
  );
}

const valueAt = (input: unknown, path: Path): unknown =>
  path.reduce<unknown>(
    (v, k) =>
      typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined,
    input,
  );

/**
 * One issue as a sentence. `schema` and `input` are at `base` (a union's
 * chosen option, once one is chosen); the issue's path is relative to them.
 */
function explain(
  issue: Issue,
  schema: Schema,
  input: unknown,
  base: Path,
  root: { schema: Schema; input: unknown },
): string {
  const full = [...base, ...issue.path];
  switch (issue.code) {
    case 'unrecognized_keys': {
      const value = valueAt(input, issue.path);
      const shape = objectOf(schemaAt(schema, issue.path, input), value)?._zod.def.shape ?? {};
      const known = Object.keys(shape);
      const key = issue.keys[0]!;
      const where = full.length ? `in \`${pathText(full)}\`` : 'at the top level';
      const guess = guessKey(key, shape, value);
      const more =
        issue.keys.length > 1
          ? ` (and ${issue.keys
              .slice(1)
              .map((k) => `\`${k}\``)
              .join(', ')})`
          : '';
      return `unknown key \`${key}\` ${where}${more}; ${guess ? `did you mean \`${guess}\`?` : `the keys there are ${known.map((k) => `\`${k}\``).join(', ')}`}`;
    }
    case 'invalid_union': {
      const union = unwrap(schemaAt(schema, issue.path, input));
      if (union?._zod.def.type !== 'union' || issue.errors.length === 0) break;
      const options = union._zod.def.options;
      const value = valueAt(input, issue.path);
      // The option meant: the one with fewest problems, not refused for its type as a whole.
      const ranked = issue.errors
        .map((errors, i) => ({ errors, i }))
        .filter(
          ({ errors }) => !errors.some((e) => e.code === 'invalid_type' && e.path.length === 0),
        )
        .sort((a, b) => a.errors.length - b.errors.length);
      const chosen = ranked[0];
      if (!chosen || !options[chosen.i]) break;
      // Each option misses its own required key (an empty upstream): name them all.
      const needs = ranked
        .filter((r) => r.errors.length === chosen.errors.length)
        .map((r) => r.errors[0])
        .filter((e) => e?.code === 'invalid_type' && e.input === undefined && e.path.length === 1)
        .map((e) => `\`${String(e!.path[0])}\``);
      const misspelt = chosen.errors.some((e) => e.code === 'unrecognized_keys');
      if (!misspelt && needs.length > 1 && needs.length === ranked.length)
        return `\`${pathText(full)}\` needs ${needs.slice(0, -1).join(', ')} or ${needs[needs.length - 1]}`;
      // A misspelt key explains the rest (a required key "missing" was probably misspelt).
      const first = chosen.errors.find((e) => e.code === 'unrecognized_keys') ?? chosen.errors[0]!;
      return explain(first, options[chosen.i]!, value, full, root);
    }
    case 'invalid_type': {
      // A record of objects given a value of another type: the key was read as a record key
      // (`limits.resultTokens: 5` names a door "resultTokens").
      const parent = unwrap(schemaAt(schema, issue.path.slice(0, -1), input));
      const key = issue.path[issue.path.length - 1];
      if (
        parent?._zod.def.type === 'record' &&
        issue.expected === 'object' &&
        typeof key === 'string'
      ) {
        const inner = Object.keys(
          objectOf(parent._zod.def.valueType, undefined)?._zod.def.shape ?? {},
        );
        const guess = closestWord(key, inner);
        const section = pathText(full.slice(0, -1));
        const example = `{"${section}": {"<name>": {${inner.length ? `"${guess ?? inner[0]}": …` : '…'}}}}`;
        return `\`${pathText(full)}\` must be an object (\`${section}\` is keyed by name, e.g. ${example}); got ${describeValue(valueAt(input, issue.path))}${guess ? `; did you mean \`${section}.<name>.${guess}\`?` : ''}`;
      }
      break;
    }
    case 'invalid_key': {
      const why = issue.issues[0];
      return `\`${pathText(full)}\` is not a valid name${why ? `: it ${why.message}` : ''}`;
    }
    default:
      break;
  }
  return describeIssue({ ...issue, path: full } as Issue, root.schema, root.input);
}

/**
 * Checks a parsed config file: returns it, or throws a UsageError naming the
 * first problem (and how many more there are).
 */
export function checkConfigFile(value: Record<string, unknown>, file: string): void {
  const parsed = ConfigFileSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return;
  const issues = parsed.error.issues;
  const root = { schema: ConfigFileSchema, input: value };
  // Unknown keys first: a misspelt key also makes the key it meant look missing.
  const first = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
  const more =
    issues.length > 1
      ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})`
      : '';
  throw new UsageError(
    `--config ${file}: ${explain(first, ConfigFileSchema, value, [], root)}${more}`,
  );
}

/**
 * `limits` from a checked config file: `{ "<door>": { "timeoutMs": 8000, … } }`.
 * It names doors by mount: a name none of `mounts` has (the doors of this
 * build, openapi prefixes, upstream names) is a misspelling, not a door yet
 * to come.
 */
export function configLimits(config: Record<string, unknown>, mounts: Iterable<string>) {
  if (config.limits === undefined) return undefined;
  const limits = LimitsSchema.parse(config.limits);
  const known = [...new Set(mounts)];
  for (const name of Object.keys(limits)) {
    if (known.includes(name)) continue;
    const guess = closestWord(name, known);
    throw new UsageError(
      `--config: unknown door \`${name}\` in \`limits\`; ${guess ? `did you mean \`${guess}\`?` : `the doors are ${known.map((k) => `\`${k}\``).join(', ')}`}`,
    );
  }
  return limits;
}
