/**
 * The door's MCP surface beyond tools: upstream results shown as the
 * upstream gave them (scrubbed of configured secrets), failures in the
 * generic form, and the upstreams' resources and prompts passed through with
 * their prefix — resource URIs as `NAME+<uri>`, prompt names as
 * `NAME<sep><prompt>` — with their list changes forwarded.
 */
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import type { Client } from '@modelcontextprotocol/client';
import {
  checkResponseBytes,
  scrubTextBlocks,
  scrubValue,
  type AnyToolDef,
  type Scrubber,
  type Failure,
} from '../../kernel/index.js';
import type { GenericPresenter, Presenter, ToolResult } from '../../transport/surface.js';
import type { Gateway, UpstreamRuntime } from './gateway.js';
import { claimName, publishedName } from './naming.js';

const NARROW =
  ' Narrow the call: ask the upstream tool for less (a smaller range, fewer items, a single file or page).';

/** Results pass through as the upstream gave them, scrubbed; failures as JSON, scrubbed. */
export function createPresenter(upstream: string, scrub: Scrubber | null): Presenter {
  // Without configured secrets there is nothing to scrub: results pass as they are.
  const clean = <T>(v: T) => (scrub ? (scrubValue(acrossBlocks(v, scrub), scrub) as T) : v);
  return {
    success(_tool, value) {
      return clean(linked(upstream, value as ToolResult));
    },
    failure(tool: AnyToolDef, f: Failure, generic: GenericPresenter) {
      // The upstream's own error result, as it gave it.
      const result = f.data?.result as ToolResult | undefined;
      if (f.code === 'upstreamError' && result && Array.isArray(result.content))
        return clean({ ...result, isError: true });
      const shown = f.code === 'resultTooLarge' ? { ...f, message: `${f.message}${NARROW}` } : f;
      return clean(generic.failure(tool, shown));
    },
  };
}

/** A secret split across adjacent text blocks of a result is found too. */
function acrossBlocks<T>(value: T, scrub: Scrubber): T {
  const result = value as { content?: unknown };
  if (typeof value !== 'object' || value === null || !Array.isArray(result.content)) return value;
  return { ...value, content: scrubTextBlocks(result.content, scrub) };
}

/**
 * Resource links and embedded resources in a result name the upstream's
 * URIs; shown prefixed, so the agent can read them through Airlock.
 */
function linked(upstream: string, result: ToolResult): ToolResult {
  if (!Array.isArray(result.content)) return result;
  const content = result.content.map((c) => {
    if (c.type === 'resource_link' && typeof c.uri === 'string')
      return { ...c, uri: prefixUri(upstream, c.uri) };
    const r = c.resource as { uri?: unknown } | undefined;
    if (c.type === 'resource' && r && typeof r.uri === 'string')
      return { ...c, resource: { ...r, uri: prefixUri(upstream, r.uri) } };
    return c;
  });
  return { ...result, content };
}

/** Every page of an upstream list (bounded), so the agent sees one whole list. */
async function allPages<P extends { nextCursor?: string | undefined }, T>(
  list: (params: { cursor: string } | undefined) => Promise<P>,
  items: (page: P) => T[],
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor ? { cursor } : undefined);
    all.push(...items(page));
    cursor = page.nextCursor;
  } while (cursor && all.length < 10_000);
  return all;
}

export const MCP_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
} as const;

interface Attached {
  upstreams: Set<string>;
}

/** The prefixed URI of an upstream resource, and back. */
export const prefixUri = (upstream: string, uri: string) => `${upstream}+${uri}`;
export function splitUri(uri: string): [string, string] | null {
  const plus = uri.indexOf('+');
  return plus > 0 ? [uri.slice(0, plus), uri.slice(plus + 1)] : null;
}

/**
 * Registers resources and prompts handlers once per server; each door
 * mounted on it adds its upstream. `maxBytes` caps what one read returns.
 */
export function createExtender(gateway: Gateway, maxBytes: () => number) {
  const servers = new WeakMap<Server, Attached>();
  const live = new Set<Server>();
  gateway.onListChanged((upstream, kind) => {
    for (const server of live) {
      if (!servers.get(server)?.upstreams.has(upstream) || !server.transport) continue;
      const sent =
        kind === 'resources' ? server.sendResourceListChanged() : server.sendPromptListChanged();
      void sent.catch(() => undefined);
    }
  });

  return (upstream: string) => (raw: unknown) => {
    const server = raw as Server;
    let attached = servers.get(server);
    if (!attached) {
      const upstreams = new Set<string>();
      attached = { upstreams };
      servers.set(server, attached);
      const view = serverView(gateway, () => [...upstreams], maxBytes);
      registerResources(server, view);
      registerPrompts(server, view);
      const previous = server.oninitialized;
      server.oninitialized = () => {
        previous?.();
        live.add(server);
      };
      const closed = server.onclose;
      server.onclose = () => {
        live.delete(server);
        closed?.();
      };
    }
    attached.upstreams.add(upstream);
  };
}

/** One server's side of the gateway: the upstreams mounted on it, and reads capped at `maxBytes`. */
interface ServerView {
  /** The runtime of `name` when it is mounted on this server. */
  attached(name: string): UpstreamRuntime | undefined;
  /** `fn` over every mounted upstream that offers `kind`; one that fails adds nothing. */
  each<T>(
    kind: 'resources' | 'prompts',
    fn: (rt: UpstreamRuntime, c: Client) => Promise<T[]>,
  ): Promise<T[]>;
  /** `value` scrubbed, or -32603 when it exceeds the read cap. */
  capped<T>(value: T, rt: UpstreamRuntime): T;
}

function serverView(
  gateway: Gateway,
  upstreams: () => string[],
  maxBytes: () => number,
): ServerView {
  const runtimes = () =>
    upstreams()
      .map((n) => gateway.runtime(n))
      .filter((rt): rt is UpstreamRuntime => rt !== undefined);
  return {
    attached: (name) => (upstreams().includes(name) ? gateway.runtime(name) : undefined),
    async each(kind, fn) {
      const lists = await Promise.all(
        runtimes().map(async (rt) => {
          const c = await clientOf(rt);
          if (!c?.getServerCapabilities()?.[kind]) return [];
          return fn(rt, c).catch(() => []);
        }),
      );
      return lists.flat();
    },
    capped(value, rt) {
      const clean = scrubValue(value, rt.scrub) as typeof value;
      const tooLarge = checkResponseBytes(JSON.stringify(clean), maxBytes());
      if (tooLarge) throw new ProtocolError(-32603, `${tooLarge.message}${NARROW}`);
      return clean;
    },
  };
}

async function clientOf(rt: UpstreamRuntime): Promise<Client | null> {
  const c = await rt.upstream.client(5_000);
  return 'ok' in c ? null : c;
}

/** `resources/list`, `resources/templates/list` and `resources/read` across the mounted upstreams. */
function registerResources(server: Server, view: ServerView) {
  server.setRequestHandler('resources/list', async () => ({
    resources: (await view.each('resources', async (rt, c) => {
      const resources = await allPages(
        (cursor) => c.listResources(cursor),
        (p) => p.resources,
      );
      return resources.map((r) =>
        scrubValue(
          { ...r, uri: prefixUri(rt.name, r.uri), name: `${rt.name}${rt.separator}${r.name}` },
          rt.scrub,
        ),
      );
    })) as never,
  }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: (await view.each('resources', async (rt, c) => {
      const resourceTemplates = await allPages(
        (cursor) => c.listResourceTemplates(cursor),
        (p) => p.resourceTemplates,
      );
      return resourceTemplates.map((t) =>
        scrubValue(
          {
            ...t,
            uriTemplate: prefixUri(rt.name, t.uriTemplate),
            name: `${rt.name}${rt.separator}${t.name}`,
          },
          rt.scrub,
        ),
      );
    })) as never,
  }));
  server.setRequestHandler('resources/read', async (request) => {
    const split = splitUri(request.params.uri);
    const rt = split ? view.attached(split[0]) : undefined;
    if (!split || !rt)
      throw new ProtocolError(
        -32602,
        `Unknown resource '${request.params.uri}'; call resources/list and use one of its URIs (they start with the upstream's name and '+').`,
      );
    const c = await clientOf(rt);
    if (!c)
      throw new ProtocolError(
        -32603,
        `The upstream '${rt.name}' is not running; retry in a few seconds.`,
      );
    const result = await c.readResource({ uri: split[1] });
    return view.capped(
      {
        ...result,
        contents: result.contents.map((x) => ({ ...x, uri: prefixUri(rt.name, x.uri) })),
      },
      rt,
    ) as never;
  });
}

/** Prompt names as published, per upstream, deterministic across upstreams. */
async function promptNames(view: ServerView) {
  const taken = new Set<string>();
  const all = await view.each('prompts', async (rt, c) => {
    const prompts = await allPages(
      (cursor) => c.listPrompts(cursor),
      (p) => p.prompts,
    );
    return prompts.map((p) => ({ rt, prompt: p }));
  });
  return all.map(({ rt, prompt }) => ({
    rt,
    prompt,
    name: claimName(publishedName(rt.name, rt.separator, prompt.name), taken),
  }));
}

/** `prompts/list` and `prompts/get` across the mounted upstreams. */
function registerPrompts(server: Server, view: ServerView) {
  server.setRequestHandler('prompts/list', async () => ({
    prompts: (await promptNames(view)).map(({ rt, prompt, name }) =>
      scrubValue({ ...prompt, name }, rt.scrub),
    ) as never,
  }));
  server.setRequestHandler('prompts/get', async (request) => {
    const found = (await promptNames(view)).find((p) => p.name === request.params.name);
    if (!found)
      throw new ProtocolError(
        -32602,
        `Unknown prompt '${request.params.name}'; call prompts/list to see the available prompts.`,
      );
    const c = await clientOf(found.rt);
    if (!c)
      throw new ProtocolError(
        -32603,
        `The upstream '${found.rt.name}' is not running; retry in a few seconds.`,
      );
    const result = await c.getPrompt({
      name: found.prompt.name,
      ...(request.params.arguments ? { arguments: request.params.arguments } : {}),
    });
    return view.capped(result, found.rt) as never;
  });
}
