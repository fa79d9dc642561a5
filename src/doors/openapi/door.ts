/**
 * One openapi door mount: three tools (`<prefix>_resources`,
 * `<prefix>_describe`, `<prefix>_call`) over one catalog. The mount name is
 * the prefix, so grants, audit and `/mcp/<prefix>` are per API.
 */
import type { ServedDoor } from '../../transport/surface.js';
import type { AnyToolDef, Logger } from '../../kernel/index.js';
import type { Catalog } from './catalog.js';
import { indexCatalog } from './catalog-index.js';
import { createRuntime, type ProbeOptions } from './runtime.js';
import { createPresenter } from './present.js';
import { createProbe } from './probe.js';
import { resourcesTool } from './tools/resources.js';
import { describeTool } from './tools/describe.js';
import { callTool } from './tools/call.js';
import { DEFAULT_UPSTREAM, type FetchLike, type UpstreamLimits } from './http/send.js';

import { DEFAULT_PREFIX } from './config.js';

export { DEFAULT_PREFIX };

export interface OpenapiDoorOptions {
  catalog: Catalog;
  /** Tool-name prefix and mount name (default `plane`). */
  prefix?: string | undefined;
  /** Overrides the document's servers; only its origin is ever contacted. */
  baseUrl?: string | undefined;
  /** Extra request headers; `${VAR}` in a value is read from `env`. */
  headers?: Record<string, string> | undefined;
  /** Argument defaults (`slug=acme`). */
  defaults?: Record<string, string> | undefined;
  /** Where secrets come from (see http/auth.ts). */
  env: NodeJS.ProcessEnv;
  logger: Logger;
  probe?: ProbeOptions | undefined;
  upstream?: Partial<UpstreamLimits> | undefined;
  /** For tests: the HTTP client. */
  fetch?: FetchLike | undefined;
}

/**
 * @example
 * const door = createOpenapiDoor({ catalog: await compileSpec('petstore.yaml'), prefix: 'pets', env: process.env, logger });
 * kernel.mount(door); // pets_resources, pets_describe, pets_call
 */
export function createOpenapiDoor(options: OpenapiDoorOptions): ServedDoor {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const rt = createRuntime({
    prefix,
    index: indexCatalog(options.catalog),
    baseUrl: options.baseUrl,
    headers: options.headers,
    defaults: options.defaults,
    env: options.env,
    limits: { ...DEFAULT_UPSTREAM, ...options.upstream },
    fetch: options.fetch,
    probe: options.probe,
    logger: options.logger,
  });
  const probe = createProbe(rt);
  const title = options.catalog.source.title || 'an API';
  return {
    name: 'openapi',
    mount: prefix,
    tools: [resourcesTool(rt, probe), describeTool(rt), callTool(rt, probe)] as AnyToolDef[],
    targetForms: [`${prefix}:<resource>.<method>`, '<METHOD> <path>'],
    limits: { timeoutMs: 120_000, responseBytes: 1024 * 1024 },
    mcp: {
      presenter: createPresenter(rt.scrub),
      instructions: `${title} through three tools: ${rt.tool('resources')} finds a resource, ${rt.tool('describe')} shows a method's signature and an example, ${rt.tool('call')} runs it. Ask the user before any destructive call (confirm: true).`,
    },
  };
}
