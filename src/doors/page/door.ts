/**
 * The `page` door: the 18 `wu_*` tools over a relay (`Puente`), the bridge's
 * browser files at `/bridge.js`, and the owner-only route that hands the
 * workspace's own page its bridge token (spec/README.md "serve").
 */
import type { RestRequest, RestResponse, ServedDoor } from '../../transport/surface.js';
import { failure, type Failure, type Kernel } from '../../kernel/index.js';
import type { RelayConfig } from './config.js';
import { Puente, type PuenteLogger } from './puente.js';
import { createPageTools } from './tools.js';
import { pagePresenter } from './presenter.js';
import { servePageStatic } from './static.js';

export interface PageDoorOptions {
  config: RelayConfig;
  /** A relay someone else owns (the `airlock relay` host); when absent the door starts its own in `start()`. */
  puente?: Puente;
  logger?: PuenteLogger & { info?(...args: unknown[]): void };
  /** Serve `/bridge.js`, the demo page and the bridge-token route (the workspace does; stdio does not need them). */
  web?: boolean;
  /** How long to wait for the page's action list to learn an action's effect (default 2 s; tests shorten it). */
  effectTimeoutMs?: number;
}

/** The relay's WebSocket URL as a page should dial it. */
export function relayUrl(config: RelayConfig, port: number): string {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return `ws://${shown}:${port}`;
}

/**
 * Same-origin check for the token route: a browser request must come from a
 * page served by this very host (Origin equal to the Host's origin, or a
 * same-origin fetch); non-browser clients already proved the bearer token.
 */
function sameOrigin(request: RestRequest): boolean {
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const site = header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = header('origin');
  if (origin === undefined) return true;
  const host = header('host');
  return host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
}

export function createPageDoor(options: PageDoorOptions): ServedDoor & { relay(): Puente | null } {
  const { config } = options;
  let puente: Puente | null = options.puente ?? null;
  const owned = !options.puente;
  const tools = createPageTools({
    config,
    relay: () => puente,
    ...(options.effectTimeoutMs === undefined ? {} : { effectTimeoutMs: options.effectTimeoutMs }),
  });

  const tokenRoute = {
    method: 'GET' as const,
    path: 'page/bridge-token',
    summary:
      "The page bridge's relay URL and token, for the workspace's own web page (same-origin, owner-only): {url, token, versions}. Never put the token in a URL, bundle or persisted state.",
    async handler(request: RestRequest): Promise<RestResponse | Failure> {
      if (!sameOrigin(request))
        return failure(
          'notAuthorized',
          'The bridge token is only given to pages served by this workspace itself; open the page from this server’s own origin.',
        );
      if (!puente || config.token === null)
        return failure('unavailable', 'The page relay is not listening yet; retry in a moment.');
      const port = puente.address()?.port ?? config.port;
      return {
        status: 200,
        body: { url: relayUrl(config, port), token: config.token, versions: [2, 1] },
      };
    },
  };

  return {
    name: 'page',
    tools,
    // The page's origin, then the action (or, for the other tools, the tool's name).
    targetForms: ['<origin>:<action>'],

    // The relay's own per-command timeout answers first, with a WU code.
    limits: {
      timeoutMs: config.timeout + 5000,
      requestBytes: config.maxPayload,
      responseBytes: Math.max(config.maxPayload * 2, 8 * 1024 * 1024),
    },
    mcp: {
      presenter: pagePresenter,
      instructions:
        'The page door reaches a live web page through its bridge. Call wu_conexion to see whether a page is connected, wu_list_actions for what it offers, wu_snapshot for its accessibility tree (refs usable by wu_click and wu_type). The page decides what is allowed: a refused call answers WU_PERMISSION_DENIED.',
    },
    http: {
      ...(options.web === false ? {} : { routes: [tokenRoute], serveStatic: servePageStatic }),
      banner() {
        const port = puente?.address()?.port;
        return port === undefined
          ? []
          : [`Page relay       ${relayUrl(config, port)}   (bridge at /bridge.js)`];
      },
      async snapshot() {
        const port = puente?.address()?.port;
        return {
          page: {
            relay: port === undefined ? null : relayUrl(config, port),
            connected: puente?.conectado() ?? false,
          },
        };
      },
    },
    relay: () => puente,
    async start(_kernel: Kernel) {
      if (!owned) return;
      const p = new Puente(config, options.logger ? { logger: options.logger } : {});
      try {
        await p.ready();
      } catch (error) {
        await p.close().catch(() => undefined);
        throw new Error(
          `the page relay cannot listen on ${config.host}:${config.port}: ${(error as Error).message} (choose another with --relay-port, 0 picks a free one)`,
          { cause: error },
        );
      }
      puente = p;
      const port = p.address()?.port ?? config.port;
      options.logger?.info?.(
        { relay: relayUrl(config, port) },
        `page relay listening on ${relayUrl(config, port)}`,
      );
    },
    async stop() {
      if (owned && puente) {
        const p = puente;
        puente = null;
        await p.close();
      }
    },
  };
}
