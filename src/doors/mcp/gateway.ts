/**
 * The upstreams of one workspace: one supervised client and one door per
 * upstream (mount = the upstream's name, so grants, journal, audit and
 * `/mcp/<NAME>` are per upstream), with the published names assigned across
 * all of them in configuration order (naming.ts), effects from annotations
 * or the owner's overrides (stored, so they outlast a restart), and the
 * tools re-read whenever an upstream reconnects or announces a change.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DEFAULT_LIMITS,
  operationOf,
  scrubbedLogger,
  type Scrubber,
  type AnyToolDef,
  type Effect,
  type Kernel,
  type Logger,
} from '../../kernel/index.js';
import type { UpstreamConfig } from './config.js';
import type { CatalogEntry } from './catalog.js';
import { definitionOf, digestOf, REVIEWS, type Definition, type Review } from './pinning.js';
import { createUpstream, type Tool, type Upstream, type UpstreamStatus } from './upstream/upstream.js';
import { isStdio } from './config.js';
import {
  createUpstreamAuthorization,
  type AuthorizationView,
  type UpstreamAuthorization,
} from './oauth/client.js';
import { createGrantStore } from './oauth/grant.js';
import { fileSealer, type Sealer } from './oauth/seal.js';
import { growingScrubber } from './oauth/token-scrub.js';
import { Callers, installClientRequests } from './upstream/client-requests.js';
import { anySignal, askOwner } from './owner-inbox.js';
import { cleanTools, listTools, publishTools } from './runtime-tools.js';
import { createOutcomes, type Outcomes } from './outcomes.js';

export const OVERRIDES = 'mcp.effects';

export interface ResolvedUpstream {
  name: string;
  config: UpstreamConfig;
  env: Record<string, string>;
  headers: Record<string, string>;
  /** Values scrubbed from everything this upstream shows. */
  secrets: string[];
}

export interface ToolView {
  /** Published name. */
  name: string;
  upstreamTool: string;
  effect: Effect;
  source: 'override' | 'annotations' | 'unreviewed';
  annotated: Effect;
  /** Pinning (`trust: "pin"`): whether its definition is the one the owner reviewed. */
  review?: 'reviewed' | 'unreviewed';
  /** Invisible characters or hidden-instruction markers in its text. */
  flags?: string[];
  /** For an unreviewed tool: what changed since the review (or that it is new). */
  diff?: unknown;
  /** Pinning: the digest of its definition now (what a re-review pins), and when the owner last reviewed it. */
  digest?: string;
  reviewedAt?: number;
}

export interface UpstreamView extends UpstreamStatus {
  tools: ToolView[];
}

/** A write whose upstream stopped while it ran: it may or may not have happened (the journal keeps it uncertain). */
export interface UncertainWrite {
  /** Published name. */
  tool: string;
  upstreamTool: string | null;
  operationId: string;
  /** The connection that made the call (its agent). */
  connection: string;
  at: number;
}

export interface UpstreamRuntime {
  readonly name: string;
  readonly upstream: Upstream;
  readonly scrub: Scrubber;
  /** Whether any secret is configured or tokens may be held (else `scrub` changes nothing). */
  readonly hasSecrets: boolean;
  /** An OAuth upstream's grant (config `oauth`). */
  readonly authorization: UpstreamAuthorization | null;
  readonly separator: string;
  readonly auditReads: boolean;
  /** The upstream's tools as last listed. */
  listed: Tool[];
  /** Owner overrides by upstream tool name (config, then stored). */
  overrides: Map<string, Effect>;
  /** `pin` or `annotations` (config). */
  readonly trust: 'pin' | 'annotations';
  /** The owner's reviews by upstream tool name (stored); null until loaded or first listed. */
  reviews: Map<string, Review> | null;
  /**
   * Every tool definition listed since start, by its short digest (bounded),
   * so an ask asked again because the definition moved can show the diff.
   */
  definitions: Map<string, Definition>;
  defs: AnyToolDef[];
  views: ToolView[];
  /** Its tools for search (the compact form's catalog). */
  catalog: CatalogEntry[];
  /** Published names of its compact form (search and call), listed instead of its tools over the budget. */
  compact: string[];
  /** Whether its tools were listed since start (or came from the lazy cache). */
  known: boolean;
  /** Agent calls in flight on it, for the requests it sends back (client-requests.ts). */
  readonly callers: Callers;
  /** Its writes' upstream tasks, and settling the writes a crash left open (outcomes.ts). */
  readonly outcomes: Outcomes;
}

export interface Gateway {
  readonly runtimes: readonly UpstreamRuntime[];
  runtime(name: string): UpstreamRuntime | undefined;
  views(): UpstreamView[];
  /** Per upstream, its writes left uncertain (newest first, at most 50). */
  uncertainWrites(): Promise<Map<string, UncertainWrite[]>>;
  /** Sets (or with null clears) the owner's effect for one upstream tool; stored. */
  setEffect(upstream: string, tool: string, effect: Effect | null): Promise<ToolView | null>;
  /**
   * The owner's review of one tool's definition as shown (`digest`): pinned,
   * stored, and the tool served by its effect again. `stale` when the
   * definition changed since it was shown; `notPinned` for `trust: "annotations"`.
   */
  review(
    upstream: string,
    tool: string,
    digest: string,
  ): Promise<ToolView | 'notFound' | 'stale' | 'notPinned'>;
  /** Called by each door's start; the first call loads stored overrides. */
  attach(kernel: Kernel): Promise<void>;
  /** The OAuth upstreams' grants as the owner may see them (never a token), by upstream name. */
  authorizations(): Promise<Record<string, AuthorizationView>>;
  /** Listeners for resource and prompt list changes (the MCP surface). */
  onListChanged(listener: (upstream: string, kind: 'resources' | 'prompts') => void): () => void;
  stop(): Promise<void>;
}

export interface GatewayOptions {
  upstreams: ResolvedUpstream[];
  logger: Logger;
  /** Folder for the lazy start's tool cache; none → lazy upstreams connect at start. */
  cacheDir?: string | undefined;
  /** The data folder: OAuth upstreams' key file (`upstream-oauth.key`) lives there. */
  dataDir?: string | undefined;
}

export function createGateway(options: GatewayOptions): Gateway {
  let kernel: Kernel | null = null;
  let attached: Promise<void> | null = null;
  const listeners = new Set<(upstream: string, kind: 'resources' | 'prompts') => void>();
  const runtimes: UpstreamRuntime[] = [];

  const cacheFile = (name: string) =>
    options.cacheDir ? join(options.cacheDir, `${name}.tools.json`) : null;

  /** Names across all upstreams in order; each runtime whose list changed is re-read by the kernel. */
  function rebuild(changed: string | null) {
    const taken = new Set<string>();
    for (const rt of runtimes) {
      const before = JSON.stringify(rt.views);
      publishTools(rt, taken, () => kernel?.limits(rt.name) ?? DEFAULT_LIMITS);
      if (kernel?.door(rt.name) && (rt.name === changed || JSON.stringify(rt.views) !== before))
        kernel.refreshTools(rt.name);
    }
  }

  /** `rt` lists `tools` now: its first review pinned when due, and every name assigned again. */
  async function listed(rt: UpstreamRuntime, tools: Tool[]) {
    rt.listed = tools;
    await pinFirstReview(kernel, rt);
    rebuild(rt.name);
  }

  let sealer: Sealer | null = null;
  const sealerOf = () => {
    if (!options.dataDir) throw new Error('an OAuth upstream needs a data folder for its key file');
    return (sealer ??= fileSealer(options.dataDir));
  };

  for (const u of options.upstreams) {
    runtimes.push(
      createRuntime(u, {
        logger: options.logger,
        kernel: () => kernel,
        sealer: () => sealerOf(),
        listed,
        cacheFile: cacheFile(u.name),
        listChanged: (kind) => {
          for (const l of listeners) l(u.name, kind);
        },
      }),
    );
  }

  async function startOne(rt: UpstreamRuntime, config: UpstreamConfig) {
    const file = cacheFile(rt.name);
    if (config.start === 'lazy' && file) {
      const cached = await readFile(file, 'utf8').catch(() => null);
      if (cached) {
        // Scrubbed again: a list kept by an older release may carry a secret.
        const tools = cleanTools(JSON.parse(cached) as Tool[], rt.scrub, options.logger);
        rt.known = true;
        await listed(rt, tools);
        return; // connected at the first call
      }
    }
    await rt.upstream
      .start()
      .catch((err: unknown) =>
        options.logger.warn(
          { upstream: rt.name, err: rt.scrub(err instanceof Error ? err.message : String(err)) },
          'upstream did not start; retrying with backoff',
        ),
      );
  }

  return {
    runtimes,
    runtime: (name) => runtimes.find((r) => r.name === name),
    views: () => runtimes.map((rt) => ({ ...rt.upstream.status(), tools: rt.views })),
    uncertainWrites: () => uncertainWritesOf(kernel, runtimes),
    async setEffect(upstream, tool, effect) {
      const rt = runtimes.find((r) => r.name === upstream);
      if (!rt || !kernel) return null;
      if (!rt.listed.some((t) => t.name === tool)) return null;
      if (effect) rt.overrides.set(tool, effect);
      else rt.overrides.delete(tool);
      const stored = Object.fromEntries(rt.overrides);
      await kernel.store.transaction((tx) => tx.records.put(OVERRIDES, rt.name, stored));
      // Choosing or confirming the effect is the owner's review of the definition as it is now.
      const listed = rt.listed.find((t) => t.name === tool);
      if (rt.trust === 'pin' && listed) {
        rt.reviews ??= new Map();
        rt.reviews.set(tool, reviewOf(listed));
        await storeReviews(kernel, rt);
      }
      rebuild(null);
      return rt.views.find((v) => v.upstreamTool === tool) ?? null;
    },
    async review(upstream, tool, digest) {
      const rt = runtimes.find((r) => r.name === upstream);
      const listed = rt?.listed.find((t) => t.name === tool);
      if (!rt || !kernel || !listed) return 'notFound';
      if (rt.trust !== 'pin') return 'notPinned';
      if (digestOf(listed) !== digest) return 'stale';
      rt.reviews ??= new Map();
      rt.reviews.set(tool, reviewOf(listed));
      await storeReviews(kernel, rt);
      rebuild(null);
      return rt.views.find((v) => v.upstreamTool === tool) ?? 'notFound';
    },
    attach(k) {
      attached ??= (async () => {
        kernel = k;
        if (options.cacheDir) await mkdir(options.cacheDir, { recursive: true });
        await loadStored(k, runtimes);
        const configs = new Map(options.upstreams.map((u) => [u.name, u.config]));
        await Promise.all(runtimes.map((rt) => startOne(rt, configs.get(rt.name)!)));
      })();
      return attached;
    },
    async authorizations() {
      const out: Record<string, AuthorizationView> = {};
      for (const rt of runtimes) if (rt.authorization) out[rt.name] = await rt.authorization.view();
      return out;
    },
    onListChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      await Promise.all(runtimes.map((rt) => rt.upstream.stop()));
    },
  };
}

/** What one upstream's runtime needs from its gateway. */
interface RuntimeDeps {
  logger: Logger;
  /** The kernel once attached. */
  kernel(): Kernel | null;
  /** The sealer of OAuth grants (throws without a data folder). */
  sealer(): Sealer;
  /** Takes a fresh tool list (pins the first review, assigns names again). */
  listed(rt: UpstreamRuntime, tools: Tool[]): Promise<void>;
  /** Where the tool list is kept for a lazy start, or null. */
  cacheFile: string | null;
  /** The upstream's resources or prompts list changed. */
  listChanged(kind: 'resources' | 'prompts'): void;
}

/** One upstream's runtime: its scrubber, OAuth grant, supervised client and tool state. */
function createRuntime(u: ResolvedUpstream, deps: RuntimeDeps): UpstreamRuntime {
  const scrub = growingScrubber(u.secrets);
  const authorization = authorizationOf(u, deps, scrub);
  const logger = scrubbedLogger(deps.logger.child({ door: 'mcp', upstream: u.name }), scrub);
  const callers = new Callers();
  const allow = {
    sampling: u.config.allow.sampling === true,
    formElicitation: u.config.allow.formElicitation === true,
    roots: u.config.allow.roots === true,
  };
  const upstream = createUpstream({
    name: u.name,
    config: u.config,
    env: u.env,
    headers: u.headers,
    logger,
    scrub,
    authorization: authorization ?? undefined,
    configureClient: (client) =>
      installClientRequests(client, {
        name: u.name,
        allow,
        callers,
        ownerInbox: (caller, request, signal) => {
          const kernel = deps.kernel();
          return kernel
            ? askOwner(kernel, rt, caller.connection, request, anySignal(signal, caller.signal))
            : Promise.resolve('cancel');
        },
      }),
    onConnected: async (client) => {
      // Back (or up at last): the writes a crash left open are settled from it.
      rt.outcomes.soon();
      const tools = await listTools(client, scrub, logger);
      rt.known = true;
      await deps.listed(rt, tools);
      const file = deps.cacheFile;
      if (file)
        await writeFile(file, JSON.stringify(rt.listed)).catch((err: unknown) =>
          logger.warn({ err }, 'could not keep the tool list for a lazy start'),
        );
    },
    onListChanged: (kind) => {
      if (kind !== 'tools') {
        deps.listChanged(kind);
        return;
      }
      void rt.upstream
        .client(0)
        .then(async (client) => {
          if ('ok' in client) return;
          await deps.listed(rt, await listTools(client, scrub, logger));
        })
        .catch((err: unknown) => logger.warn({ err }, 'could not re-list the tools'));
    },
  });
  const rt: UpstreamRuntime = {
    name: u.name,
    scrub,
    hasSecrets: u.secrets.length > 0 || authorization !== null,
    authorization,
    separator: u.config.separator,
    auditReads: u.config.auditReads,
    listed: [],
    overrides: new Map(Object.entries(u.config.tools).map(([t, o]) => [t, o.effect])),
    trust: u.config.trust,
    reviews: null,
    definitions: new Map(),
    defs: [],
    views: [],
    catalog: [],
    compact: [],
    known: false,
    callers,
    upstream,
    outcomes: createOutcomes({ mount: u.name, upstream, kernel: deps.kernel, logger }),
  };
  return rt;
}

/** An OAuth upstream's grant (config `oauth`), or null. */
function authorizationOf(
  u: ResolvedUpstream,
  deps: RuntimeDeps,
  scrub: ReturnType<typeof growingScrubber>,
): UpstreamAuthorization | null {
  const oauth = !isStdio(u.config) ? u.config.oauth : undefined;
  return oauth && !isStdio(u.config)
    ? createUpstreamAuthorization({
        upstream: u.name,
        url: u.config.url,
        settings: oauth,
        headers: u.headers,
        grants: createGrantStore({
          upstream: u.name,
          store: () => deps.kernel()?.store ?? null,
          sealer: {
            seal: (plain, name) => deps.sealer().seal(plain, name),
            open: (sealed, name) => deps.sealer().open(sealed, name),
          },
        }),
        // The tokens are secrets of this upstream: scrubbed from all it shows, a second line of defence.
        onSecrets: (values) => scrub.add(values),
      })
    : null;
}

/** Stores the reviews of `rt` (the owner's, keyed by upstream tool name). */
async function storeReviews(kernel: Kernel | null, rt: UpstreamRuntime) {
  if (!kernel || !rt.reviews) return;
  const value = Object.fromEntries(rt.reviews);
  await kernel.store.transaction((tx) => tx.records.put(REVIEWS, rt.name, value));
}

const reviewOf = (tool: Tool): Review => ({
  digest: digestOf(tool),
  definition: definitionOf(tool),
  reviewedAt: Date.now(),
});

/**
 * The first review of a pinned upstream is its configuration: the tools it
 * lists the first time are pinned as they are; what changes or appears
 * after that waits for the owner.
 */
async function pinFirstReview(kernel: Kernel | null, rt: UpstreamRuntime) {
  if (rt.trust !== 'pin' || !kernel) return;
  if (rt.reviews === null) rt.reviews = new Map();
  if (rt.reviews.size > 0) return;
  for (const tool of rt.listed) rt.reviews.set(tool.name, reviewOf(tool));
  await storeReviews(kernel, rt);
}

/** The owner's stored reviews and effect overrides, per upstream. */
async function loadStored(k: Kernel, runtimes: UpstreamRuntime[]) {
  for (const rt of runtimes) {
    const reviews = await k.store.read((tx) =>
      tx.records.get<Record<string, Review>>(REVIEWS, rt.name),
    );
    rt.reviews = new Map(Object.entries(reviews?.value ?? {}));
    const stored = await k.store.read((tx) =>
      tx.records.get<Record<string, Effect>>(OVERRIDES, rt.name),
    );
    for (const [tool, effect] of Object.entries(stored?.value ?? {}))
      rt.overrides.set(tool, effect);
  }
}

/** Per upstream, its writes left uncertain (newest first, at most 50). */
async function uncertainWritesOf(
  kernel: Kernel | null,
  runtimes: UpstreamRuntime[],
): Promise<Map<string, UncertainWrite[]>> {
  const found = new Map<string, UncertainWrite[]>(runtimes.map((rt) => [rt.name, []]));
  if (!kernel) return found;
  const entries = await kernel.store.read((tx) => tx.journal.listByState('uncertain', 1000));
  for (const entry of entries.sort((a, b) => b.updatedAt - a.updatedAt)) {
    const list = found.get(entry.scope);
    const rt = runtimes.find((r) => r.name === entry.scope);
    if (!list || !rt || list.length >= 50) continue;
    list.push({
      tool: entry.tool,
      upstreamTool: rt.views.find((v) => v.name === entry.tool)?.upstreamTool ?? null,
      operationId: operationOf(entry.operationId),
      connection: entry.connection,
      at: entry.updatedAt,
    });
  }
  return found;
}
