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
import { AIRLOCK_VERSION, failure, type Failure, type Logger } from '../../../kernel/index.js';
import { isStdio, type UpstreamConfig } from '../config.js';
import { BoundedReadBuffer, DEFAULT_UPSTREAM_MESSAGE_BYTES } from './bounded.js';
import { authorizationFailure, type UpstreamAuthorization } from '../oauth/client.js';
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
  return new SupervisedUpstream(options);
}

type UpstreamTransport = StdioClientTransport | StreamableHTTPClientTransport;

/** The supervisor: one connection at a time, restarts with backoff, the owner's (re)connect. */
class SupervisedUpstream implements Upstream {
  readonly name: string;
  private readonly config: UpstreamConfig;
  private readonly logger: Logger;
  private readonly scrub: (text: string) => string;
  private readonly backoff: readonly number[];
  private state: UpstreamState = 'idle';
  private current: { client: Client; transport: UpstreamTransport } | null = null;
  private restarts = 0;
  private quickFailures = 0;
  private lastError: string | null = null;
  private connectedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly stderr: string[] = [];
  private waiters: Array<() => void> = [];
  private connecting: Promise<void> | null = null;

  constructor(private readonly options: UpstreamOptions) {
    this.name = options.name;
    this.config = options.config;
    this.logger = options.logger;
    this.scrub = options.scrub;
    this.backoff = options.backoffMs ?? DEFAULT_BACKOFF;
  }

  status(): UpstreamStatus {
    const { config } = this;
    return {
      name: this.name,
      transport: isStdio(config) ? 'stdio' : 'http',
      target: isStdio(config) ? config.command : targetOf(config.url),
      state: this.state,
      pid: this.pidOf(),
      restarts: this.restarts,
      lastError: this.lastError,
      stderr: [...this.stderr],
    };
  }

  async start(): Promise<void> {
    // An attempt already under way may have read the grant before the owner's connect wrote it:
    // it ends first, and this start makes its own attempt unless that one connected.
    await this.connecting;
    if (this.state === 'running' && this.current) return;
    if (this.state === 'idle' || this.state === 'failed' || this.state === 'unauthorized') {
      this.state = 'starting';
      this.quickFailures = 0;
    }
    clearTimeout(this.timer); // a restart or recheck due later is this attempt
    await this.attempt();
    if ((this.state as UpstreamState) !== 'running')
      throw new Error(this.lastError ?? `upstream ${this.name} did not start`);
  }

  async client(waitMs: number): Promise<Client | Failure> {
    const { name } = this;
    const blocked = await this.options.authorization?.blocked();
    if (blocked) {
      if (this.state !== 'stopped' && this.state !== 'unauthorized')
        await this.unauthorized(blocked);
      return reconnectFailure(name, blocked);
    }
    if (this.state === 'unauthorized') {
      this.state = 'starting';
      void this.attempt();
    }
    if (this.state === 'idle') {
      this.state = 'starting';
      void this.attempt();
    }
    if (this.state === 'starting' || this.state === 'restarting') await this.wait(waitMs);
    const state = this.state as UpstreamState;
    if (this.current && state === 'running') return this.current.client;
    if (state === 'failed')
      return failure(
        'unavailable',
        `The upstream '${name}' failed and is no longer restarted (${this.lastError ?? 'no reason recorded'}); ask the server operator to check it (its stderr is in the upstreams view) and restart Airlock.`,
        { upstream: name, state },
      );
    return failure(
      'unavailable',
      `The upstream '${name}' is ${state === 'restarting' ? 'restarting' : 'not running'}; retry in a few seconds.`,
      { upstream: name, state },
    );
  }

  async refusedAuthorization(error: unknown): Promise<Failure | null> {
    const { authorization } = this.options;
    const refused = authorization ? authorizationFailure(error) : null;
    if (!refused) return null;
    // A refusal after a good refresh (or a wish for more scope) was not recorded by a refresh: record it.
    if (refused.scope || !(await authorization!.blocked()))
      await authorization!.refuse(refused.reason, refused.scope);
    if (this.state !== 'stopped') await this.unauthorized(refused.reason);
    return reconnectFailure(this.name, refused.reason);
  }

  lost(client: Client, reason: string): void {
    if (this.current?.client !== client || this.state !== 'running') return;
    this.current = null;
    if (Date.now() - this.connectedAt >= STABLE_MS) this.quickFailures = 0;
    this.lastError = this.scrub(reason);
    this.logger.warn(
      { upstream: this.name, lastError: this.lastError },
      'upstream connection lost; reconnecting',
    );
    void client.close().catch(() => undefined);
    this.scheduleRestart();
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    clearTimeout(this.timer);
    this.settle();
    const c = this.current;
    this.current = null;
    await c?.client.close().catch(() => undefined);
  }

  private settle() {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }

  private keepStderr(line: string) {
    const clean = this.scrub(line);
    this.stderr.push(clean);
    if (this.stderr.length > STDERR_LINES) this.stderr.shift();
    this.logger.info({ upstream: this.name, stderr: clean }, 'upstream stderr');
  }

  private async connectOnce(): Promise<void> {
    const { config } = this;
    const transport = createTransport(this.options, (line) => this.keepStderr(line));
    const client = createClient(this.options);
    this.options.configureClient?.(client);
    try {
      await client.connect(transport);
      await this.options.onConnected(client);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    this.current = { client, transport };
    this.connectedAt = Date.now();
    // An HTTP call's stream that breaks mid-answer: the upstream went away (its calls end, it is reconnected).
    if (!isStdio(config))
      client.onerror = (error) => {
        if (/SSE stream disconnected/.test(error.message))
          this.lost(client, `the upstream's stream broke: ${error.message}`);
      };
    client.onclose = () => {
      if (this.current?.client !== client) return;
      this.current = null;
      if (this.state === 'stopped') return;
      if (Date.now() - this.connectedAt >= STABLE_MS) this.quickFailures = 0;
      const { stderr } = this;
      this.lastError = `the upstream closed the connection${stderr.length ? ` (last stderr: ${stderr[stderr.length - 1]})` : ''}`;
      this.logger.warn(
        { upstream: this.name, lastError: this.lastError },
        'upstream stopped; restarting',
      );
      this.scheduleRestart();
    };
  }

  private scheduleRestart() {
    this.quickFailures++;
    // A command that keeps dying is given up; a URL that does not answer is tried again (at the longest backoff).
    if (this.quickFailures >= MAX_QUICK_FAILURES && isStdio(this.config)) {
      this.state = 'failed';
      this.logger.error(
        { upstream: this.name, lastError: this.lastError },
        'upstream failed; giving up restarting',
      );
      this.settle();
      return;
    }
    this.state = 'restarting';
    const { backoff } = this;
    const delay = backoff[Math.min(this.quickFailures - 1, backoff.length - 1)] ?? 1000;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), delay);
    this.timer.unref();
  }

  /** Marks the upstream as waiting for the owner's (re)connect; no restarts until then. */
  private async unauthorized(reason: string) {
    this.state = 'unauthorized';
    this.lastError = `the owner must connect it: ${reason}`;
    clearTimeout(this.timer);
    // Connected on another instance sharing the store: look again now and then, and start then.
    this.timer = setTimeout(() => {
      if (this.state === 'unauthorized') void this.attempt();
    }, AUTHORIZATION_RECHECK_MS);
    this.timer.unref();
    const c = this.current;
    this.current = null;
    await c?.client.close().catch(() => undefined);
    this.settle();
  }

  private attempt(): Promise<void> {
    this.connecting ??= (async () => {
      try {
        await this.connectOrWait();
      } catch (error) {
        await this.failedAttempt(error);
      } finally {
        this.connecting = null;
        const state = this.state as UpstreamState;
        if (
          state === 'running' ||
          state === 'failed' ||
          state === 'stopped' ||
          state === 'unauthorized'
        )
          this.settle();
      }
    })();
    return this.connecting;
  }

  /** Connects, unless the owner must connect it first. */
  private async connectOrWait() {
    const blocked = await this.options.authorization?.blocked();
    if (blocked) {
      if ((this.state as UpstreamState) !== 'unauthorized')
        this.logger.warn(
          { upstream: this.name, reason: blocked },
          'upstream waits for the owner to connect it',
        );
      await this.unauthorized(blocked);
      return;
    }
    await this.connectOnce();
    if (this.state === 'restarting') this.restarts++;
    this.state = 'running';
    this.lastError = null;
    this.logger.info({ upstream: this.name, pid: this.pidOf() }, 'upstream running');
  }

  /** A connection attempt failed: wait for the owner when it was refused, else restart with backoff. */
  private async failedAttempt(error: unknown) {
    if ((this.state as UpstreamState) === 'stopped') return;
    const { authorization } = this.options;
    // Refused while connecting (e.g. more scope wanted): recorded, and the owner must reconnect.
    const refused = authorization ? authorizationFailure(error) : null;
    if (refused && (refused.scope || !(await authorization!.blocked())))
      await authorization!.refuse(refused.reason, refused.scope).catch(() => undefined);
    const blocked = await authorization?.blocked().catch(() => null);
    if (blocked) {
      this.logger.warn(
        { upstream: this.name, reason: blocked },
        'upstream waits for the owner to connect it',
      );
      await this.unauthorized(blocked);
      return;
    }
    this.lastError = this.scrub(error instanceof Error ? error.message : String(error));
    this.logger.warn({ upstream: this.name, lastError: this.lastError }, 'upstream did not start');
    this.scheduleRestart();
  }

  private pidOf() {
    const { current } = this;
    return current && current.transport instanceof StdioClientTransport
      ? current.transport.pid
      : null;
  }

  private wait(ms: number) {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/** The URL's origin and path (its query may hold secrets). */
function targetOf(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

function reconnectFailure(name: string, reason: string): Failure {
  return failure(
    'unavailable',
    `The upstream '${name}' needs the owner to reconnect it (${reason}); ask the owner to choose Reconnect for '${name}' on the Upstreams screen of the Airlock web UI, then call again.`,
    { upstream: name, state: 'unauthorized' },
  );
}

/** The SDK client Airlock connects with: its capabilities, and list changes handed on. */
function createClient(options: UpstreamOptions): Client {
  const listChanged = (kind: 'tools' | 'resources' | 'prompts') => ({
    autoRefresh: false,
    debounceMs: 50,
    onChanged: () => options.onListChanged(kind),
  });
  return new Client(
    { name: 'airlock', version: AIRLOCK_VERSION },
    {
      // An HTTP upstream may speak either era: probe (2026-07-28 `server/discover`,
      // else the 2025 handshake). A stdio upstream is spawned once, as it is.
      ...(isStdio(options.config) ? {} : { versionNegotiation: { mode: 'auto' as const } }),
      // Declared so an upstream asks (and hears why not, when the owner did not allow it): client-requests.ts.
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} },
      listChanged: {
        tools: listChanged('tools'),
        resources: listChanged('resources'),
        prompts: listChanged('prompts'),
      },
    },
  );
}

/** Spawns the command (stderr line by line to `keepStderr`) or opens the URL; messages bounded. */
function createTransport(
  options: UpstreamOptions,
  keepStderr: (line: string) => void,
): UpstreamTransport {
  const { name, config, logger } = options;
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
