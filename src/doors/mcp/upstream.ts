/**
 * One upstream MCP server, supervised (spec/gateway.md "Upstream
 * lifecycle"): connected with the SDK client over stdio (Airlock spawns the
 * command) or streamable HTTP; restarted with backoff when it dies; `failed`
 * after `MAX_QUICK_FAILURES` attempts in a row that did not stay up. Its
 * stderr goes to Airlock's structured log line by line (never stdout), and
 * the last lines are kept for the owner's view. List changes the upstream
 * announces are handed to `onListChanged`.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import type { Tool } from '@modelcontextprotocol/client';
import { AIRLOCK_VERSION, failure, type Failure, type Logger } from '../../kernel/index.js';
import { isStdio, type UpstreamConfig } from './config.js';
import { BoundedReadBuffer, DEFAULT_UPSTREAM_MESSAGE_BYTES } from './bounded.js';
import { authorizationFailure, type UpstreamAuthorization } from './oauth/client.js';
import { boundedFetch } from './http-bounded.js';

/** `unauthorized`: an OAuth upstream the owner has not connected, or whose grant ended (reconnect). */
export type UpstreamState =
  'idle' | 'starting' | 'running' | 'restarting' | 'failed' | 'stopped' | 'unauthorized';

export interface UpstreamStatus {
  name: string;
  transport: 'stdio' | 'http';
  /** The command (without arguments, which may hold secrets) or the URL's origin and path. */
  target: string;
  state: UpstreamState;
  pid: number | null;
  restarts: number;
  lastError: string | null;
  /** The last lines the upstream wrote to stderr, scrubbed. */
  stderr: string[];
}

export interface UpstreamOptions {
  name: string;
  config: UpstreamConfig;
  /** Resolved environment and headers (`${ENV}` already expanded). */
  env: Record<string, string>;
  headers: Record<string, string>;
  logger: Logger;
  scrub: (text: string) => string;
  onListChanged(kind: 'tools' | 'resources' | 'prompts'): void;
  /** Called with each new client before it connects (request handlers). */
  configureClient?(client: Client): void;
  /** Called after each (re)connection, before the upstream counts as running. */
  onConnected(client: Client): Promise<void>;
  /** Backoff delays in ms; the last repeats. */
  backoffMs?: readonly number[];
  /** An OAuth upstream's grant (`oauth` in its config): its transport's tokens, and whether it may connect. */
  authorization?: UpstreamAuthorization | undefined;
}

export const STDERR_LINES = 50;
export const MAX_QUICK_FAILURES = 6;
/** A connection that stayed up this long resets the failure count. */
const STABLE_MS = 10_000;
const DEFAULT_BACKOFF = [250, 500, 1000, 2000, 4000, 8000, 15_000] as const;
/** How often an upstream waiting for the owner's connect looks whether it was connected elsewhere. */
export const AUTHORIZATION_RECHECK_MS = 3_000;

export interface Upstream {
  readonly name: string;
  status(): UpstreamStatus;
  /** Connects if idle; resolves once running (or rejects if it could not). */
  start(): Promise<void>;
  /** The connected client, waiting (bounded) while it starts or restarts; a failure when it cannot be reached. */
  client(waitMs: number): Promise<Client | Failure>;
  /**
   * The connection behind `client` is gone though it did not close (an HTTP
   * upstream that restarted, forgot the session, or stopped answering):
   * dropped, and reconnected with backoff. Calls still waiting on it end as
   * when a connection closes. A client already replaced is left alone.
   */
  lost(client: Client, reason: string): void;
  stop(): Promise<void>;
  /**
   * For a request that failed because the upstream refused Airlock's
   * authorization: the upstream waits for the owner's reconnect, and the
   * call's failure says so; null for any other error.
   */
  refusedAuthorization(error: unknown): Promise<Failure | null>;
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const { name, config, logger, scrub } = options;
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF;
  let state: UpstreamState = 'idle';
  let current: {
    client: Client;
    transport: StdioClientTransport | StreamableHTTPClientTransport;
  } | null = null;
  let restarts = 0;
  let quickFailures = 0;
  let lastError: string | null = null;
  let connectedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const stderr: string[] = [];
  let waiters: Array<() => void> = [];
  let connecting: Promise<void> | null = null;

  const settle = () => {
    const w = waiters;
    waiters = [];
    for (const resolve of w) resolve();
  };

  const keepStderr = (line: string) => {
    const clean = scrub(line);
    stderr.push(clean);
    if (stderr.length > STDERR_LINES) stderr.shift();
    logger.info({ upstream: name, stderr: clean }, 'upstream stderr');
  };

  function makeTransport() {
    if (isStdio(config)) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...getDefaultEnvironment(), ...options.env },
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
      });
      // The SDK's buffer closes the connection on a message over its size (and
      // holds it whole until then): ours discards it as it streams and fails
      // only its call.
      const maxBytes = config.limits.upstreamMessageBytes ?? DEFAULT_UPSTREAM_MESSAGE_BYTES;
      const sdk = transport as unknown as { _readBuffer?: unknown };
      if ('_readBuffer' in sdk)
        sdk._readBuffer = new BoundedReadBuffer(maxBytes, (bytes, id) =>
          logger.warn(
            { upstream: name, bytes, limit: maxBytes, id },
            'upstream message over the limit discarded',
          ),
        );
      else logger.warn({ upstream: name }, 'cannot bound upstream messages with this SDK');
      let partial = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) keepStderr(line.trimEnd());
      });
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: options.headers },
      ...(options.authorization ? { authProvider: options.authorization.provider } : {}),
      fetch: boundedHttpFetch(name, config, logger),
    });
  }

  async function connectOnce(): Promise<void> {
    const transport = makeTransport();
    const client = new Client(
      { name: 'airlock', version: AIRLOCK_VERSION },
      {
        // An HTTP upstream may speak either era: probe (2026-07-28 `server/discover`,
        // else the 2025 handshake). A stdio upstream is spawned once, as it is.
        ...(isStdio(config) ? {} : { versionNegotiation: { mode: 'auto' as const } }),
        // Declared so an upstream asks (and hears why not, when the owner did not allow it): client-requests.ts.
        capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} },
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 50,
            onChanged: () => options.onListChanged('tools'),
          },
          resources: {
            autoRefresh: false,
            debounceMs: 50,
            onChanged: () => options.onListChanged('resources'),
          },
          prompts: {
            autoRefresh: false,
            debounceMs: 50,
            onChanged: () => options.onListChanged('prompts'),
          },
        },
      },
    );
    options.configureClient?.(client);
    try {
      await client.connect(transport);
      await options.onConnected(client);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    current = { client, transport };
    connectedAt = Date.now();
    // An HTTP call's stream that breaks mid-answer: the upstream went away (its calls end, it is reconnected).
    if (!isStdio(config))
      client.onerror = (error) => {
        if (/SSE stream disconnected/.test(error.message))
          upstream.lost(client, `the upstream's stream broke: ${error.message}`);
      };
    client.onclose = () => {
      if (current?.client !== client) return;
      current = null;
      if (state === 'stopped') return;
      if (Date.now() - connectedAt >= STABLE_MS) quickFailures = 0;
      lastError = `the upstream closed the connection${stderr.length ? ` (last stderr: ${stderr[stderr.length - 1]})` : ''}`;
      logger.warn({ upstream: name, lastError }, 'upstream stopped; restarting');
      scheduleRestart();
    };
  }

  function scheduleRestart() {
    quickFailures++;
    // A command that keeps dying is given up; a URL that does not answer is tried again (at the longest backoff).
    if (quickFailures >= MAX_QUICK_FAILURES && isStdio(config)) {
      state = 'failed';
      logger.error({ upstream: name, lastError }, 'upstream failed; giving up restarting');
      settle();
      return;
    }
    state = 'restarting';
    const delay = backoff[Math.min(quickFailures - 1, backoff.length - 1)] ?? 1000;
    clearTimeout(timer);
    timer = setTimeout(() => void attempt(), delay);
    timer.unref();
  }

  /** Marks the upstream as waiting for the owner's (re)connect; no restarts until then. */
  async function unauthorized(reason: string) {
    state = 'unauthorized';
    lastError = `the owner must connect it: ${reason}`;
    clearTimeout(timer);
    // Connected on another instance sharing the store: look again now and then, and start then.
    timer = setTimeout(() => {
      if (state === 'unauthorized') void attempt();
    }, AUTHORIZATION_RECHECK_MS);
    timer.unref();
    const c = current;
    current = null;
    await c?.client.close().catch(() => undefined);
    settle();
  }

  function attempt(): Promise<void> {
    connecting ??= (async () => {
      try {
        const blocked = await options.authorization?.blocked();
        if (blocked) {
          if ((state as UpstreamState) !== 'unauthorized')
            logger.warn(
              { upstream: name, reason: blocked },
              'upstream waits for the owner to connect it',
            );
          await unauthorized(blocked);
          return;
        }
        await connectOnce();
        if (state === 'restarting') restarts++;
        state = 'running';
        lastError = null;
        logger.info({ upstream: name, pid: pidOf() }, 'upstream running');
      } catch (error) {
        if ((state as UpstreamState) === 'stopped') return;
        // Refused while connecting (e.g. more scope wanted): recorded, and the owner must reconnect.
        const refused = options.authorization ? authorizationFailure(error) : null;
        if (refused && (refused.scope || !(await options.authorization!.blocked())))
          await options.authorization!.refuse(refused.reason, refused.scope).catch(() => undefined);
        const blocked = await options.authorization?.blocked().catch(() => null);
        if (blocked) {
          logger.warn(
            { upstream: name, reason: blocked },
            'upstream waits for the owner to connect it',
          );
          await unauthorized(blocked);
          return;
        }
        lastError = scrub(error instanceof Error ? error.message : String(error));
        logger.warn({ upstream: name, lastError }, 'upstream did not start');
        scheduleRestart();
      } finally {
        connecting = null;
        if (
          state === 'running' ||
          state === 'failed' ||
          state === 'stopped' ||
          state === 'unauthorized'
        )
          settle();
      }
    })();
    return connecting;
  }

  const pidOf = () =>
    current && current.transport instanceof StdioClientTransport ? current.transport.pid : null;

  const reconnectFailure = (reason: string) =>
    failure(
      'unavailable',
      `The upstream '${name}' needs the owner to reconnect it (${reason}); ask the owner to choose Reconnect for '${name}' on the Upstreams screen of the Airlock web UI, then call again.`,
      { upstream: name, state: 'unauthorized' },
    );

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });

  const upstream: Upstream = {
    name,
    status: () => ({
      name,
      transport: isStdio(config) ? 'stdio' : 'http',
      target: isStdio(config)
        ? config.command
        : (() => {
            const u = new URL(config.url);
            return `${u.origin}${u.pathname}`;
          })(),
      state,
      pid: pidOf(),
      restarts,
      lastError,
      stderr: [...stderr],
    }),
    async start() {
      if (state === 'idle' || state === 'failed' || state === 'unauthorized') {
        state = 'starting';
        quickFailures = 0;
      }
      await attempt();
      if (state !== 'running') throw new Error(lastError ?? `upstream ${name} did not start`);
    },
    async client(waitMs) {
      const blocked = await options.authorization?.blocked();
      if (blocked) {
        if (state !== 'stopped' && state !== 'unauthorized') await unauthorized(blocked);
        return reconnectFailure(blocked);
      }
      if (state === 'unauthorized') {
        state = 'starting';
        void attempt();
      }
      if (state === 'idle') {
        state = 'starting';
        void attempt();
      }
      if (state === 'starting' || state === 'restarting') await wait(waitMs);
      if (current && state === 'running') return current.client;
      if (state === 'failed')
        return failure(
          'unavailable',
          `The upstream '${name}' failed and is no longer restarted (${lastError ?? 'no reason recorded'}); ask the server operator to check it (its stderr is in the upstreams view) and restart Airlock.`,
          { upstream: name, state },
        );
      return failure(
        'unavailable',
        `The upstream '${name}' is ${state === 'restarting' ? 'restarting' : 'not running'}; retry in a few seconds.`,
        { upstream: name, state },
      );
    },
    async refusedAuthorization(error) {
      const refused = options.authorization ? authorizationFailure(error) : null;
      if (!refused) return null;
      // A refusal after a good refresh (or a wish for more scope) was not recorded by a refresh: record it.
      if (refused.scope || !(await options.authorization!.blocked()))
        await options.authorization!.refuse(refused.reason, refused.scope);
      if (state !== 'stopped') await unauthorized(refused.reason);
      return reconnectFailure(refused.reason);
    },
    lost(client, reason) {
      if (current?.client !== client || state !== 'running') return;
      current = null;
      if (Date.now() - connectedAt >= STABLE_MS) quickFailures = 0;
      lastError = scrub(reason);
      logger.warn({ upstream: name, lastError }, 'upstream connection lost; reconnecting');
      void client.close().catch(() => undefined);
      scheduleRestart();
    },
    async stop() {
      state = 'stopped';
      clearTimeout(timer);
      settle();
      const c = current;
      current = null;
      await c?.client.close().catch(() => undefined);
    },
  };
  return upstream;
}

/** The HTTP transport's fetch, cutting any upstream message over the limit (http-bounded.ts). */
function boundedHttpFetch(name: string, config: UpstreamConfig, logger: Logger) {
  const maxBytes = config.limits.upstreamMessageBytes ?? DEFAULT_UPSTREAM_MESSAGE_BYTES;
  return boundedFetch(maxBytes, (bytes, id) =>
    logger.warn(
      { upstream: name, bytes, limit: maxBytes, id },
      'upstream message over the limit discarded',
    ),
  );
}

export type { Tool };
