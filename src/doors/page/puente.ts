/**
 * `Puente`: the relay's WebSocket listener for one page bridge (spec/page.md
 * "Wire protocol"). Construction starts listening; `ready()` resolves once
 * bound. Checks Origin at upgrade (403), authenticates with the v2 mutual
 * HMAC handshake (or v1, or insecure loopback mode), keeps one authenticated
 * bridge at a time, and forwards commands as request/response/cancel frames
 * with per-request bookkeeping.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { RelayConfig } from './config.js';
import { isOriginAllowed, sha256 } from './auth.js';
import { decideAuth, NonceLedger } from './handshake.js';
import { RelayError } from './relay-error.js';

export interface PuenteLogger {
  error(...args: unknown[]): void;
  warn?(...args: unknown[]): void;
  info?(...args: unknown[]): void;
}

export interface PuenteOptions {
  logger?: PuenteLogger;
  /** How long `close()` waits for sockets before terminating them (default 1000 ms). */
  closeGraceMs?: number;
}

export interface SendOptions {
  /** Aborting sends a `cancel` frame and rejects with WU_MCP_CANCELLED. */
  signal?: AbortSignal;
  /** Overrides the configured per-command timeout. */
  timeout?: number;
  /**
   * The calling tool's W3C trace context (`traceparent`, `tracestate`),
   * sent in the request frame so the page's work joins the call's trace.
   */
  traceContext?: Record<string, string>;
}

/** The W3C trace fields a request frame may carry (nothing else of the carrier). */
function traceFields(carrier: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof carrier?.traceparent === 'string') out.traceparent = carrier.traceparent;
  if (out.traceparent && typeof carrier?.tracestate === 'string')
    out.tracestate = carrier.tracestate;
  return out;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: RelayError): void;
  timer: NodeJS.Timeout;
  socket: WebSocket;
  command: string;
  cleanup(): void;
}

interface Session {
  socket: WebSocket;
  origin: string;
  relayNonce: string;
  authenticated: boolean;
  authTimer: NodeJS.Timeout | undefined;
}

const stderrLogger: PuenteLogger = {
  error: (...args) => process.stderr.write(`[wu-relay] ${args.map(String).join(' ')}\n`),
};

export class Puente {
  readonly config: RelayConfig;
  private readonly logger: PuenteLogger;
  private readonly closeGraceMs: number;
  private readonly server: Server;
  private readonly wss: WebSocketServer;
  private readonly tokenDigest: Buffer | null;
  private readonly sessions = new Set<Session>();
  private readonly pendingById = new Map<string, Pending>();
  private readonly nonces = new NonceLedger();
  private active: Session | null = null;
  private nextId = 1;
  private closed = false;
  private readonly listening: Promise<Puente>;

  constructor(config: RelayConfig, options: PuenteOptions = {}) {
    this.config = config;
    this.logger = options.logger ?? stderrLogger;
    this.closeGraceMs = options.closeGraceMs ?? 1000;
    this.tokenDigest = config.token === null ? null : sha256(config.token);
    this.server = createServer((_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
      res.end('This is the page relay: connect with a WebSocket from the page bridge.\n');
    });
    this.wss = new WebSocketServer({ noServer: true, maxPayload: config.maxPayload });
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.listening = new Promise<Puente>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(config.port, config.host, () => {
        this.server.off('error', reject);
        this.server.on('error', (err) => this.logger.error('relay listener error:', err.message));
        resolve(this);
      });
    });
    // A bind failure is reported through ready(); never as an unhandled rejection.
    this.listening.catch(() => undefined);
  }

  /** Resolves when the listener is bound; rejects if it cannot bind. Does not wait for a page. */
  ready(): Promise<Puente> {
    return this.listening;
  }

  /** The listener's address (null before it is bound or after close). */
  address(): AddressInfo | null {
    const a = this.server.address();
    return a && typeof a === 'object' ? a : null;
  }

  /** The origin of the connected page (its policy targets start with it), or null. */
  origin(): string | null {
    return this.conectado() ? this.active!.origin : null;
  }

  /** Whether a bridge is authenticated right now. */
  conectado(): boolean {
    return this.active !== null && this.active.socket.readyState === 1;
  }

  /** Requests in flight (for diagnostics and tests). */
  pending(): number {
    return this.pendingById.size;
  }

  /**
   * Sends a bridge command (e.g. `list_actions`) and resolves with its result.
   * Rejects with a `RelayError`: no bridge, disconnection, timeout,
   * cancellation, close, or the bridge's own error (`fromBridge`).
   */
  enviar(command: string, params: unknown = {}, options: SendOptions = {}): Promise<unknown> {
    const session = this.active;
    if (this.closed) return Promise.reject(new RelayError('WU_MCP_CLOSED', 'The relay is closed.'));
    if (!session || session.socket.readyState !== 1) {
      return Promise.reject(
        new RelayError(
          'WU_MCP_NOT_CONNECTED',
          'No page is connected to the relay; open the page and let its bridge connect, then retry (wu_conexion shows the state).',
        ),
      );
    }
    if (options.signal?.aborted)
      return Promise.reject(new RelayError('WU_MCP_CANCELLED', 'The call was cancelled.'));
    const id = String(this.nextId++);
    let frame: string;
    try {
      frame = JSON.stringify({
        type: 'request',
        id,
        command,
        params,
        ...traceFields(options.traceContext),
      });
    } catch {
      return Promise.reject(new RelayError('WU_MCP_BAD_PARAMS', 'The parameters are not JSON.'));
    }
    if (Buffer.byteLength(frame) > this.config.maxPayload) {
      return Promise.reject(
        new RelayError(
          'WU_MCP_PAYLOAD_TOO_LARGE',
          `The command is larger than the relay's ${this.config.maxPayload}-byte message limit; send less data.`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeout ?? this.config.timeout;
      const onAbort = () => {
        this.sendCancel(session.socket, id);
        this.settle(
          id,
          new RelayError('WU_MCP_CANCELLED', 'The call was cancelled; the page was told to stop.'),
        );
      };
      const pending: Pending = {
        resolve,
        reject,
        socket: session.socket,
        command,
        timer: setTimeout(() => {
          this.sendCancel(session.socket, id);
          this.settle(
            id,
            new RelayError(
              'WU_MCP_TIMEOUT',
              `The page did not answer '${command}' within ${timeoutMs} ms; check the page, then retry.`,
            ),
          );
        }, timeoutMs),
        cleanup: () => options.signal?.removeEventListener('abort', onAbort),
      };
      this.pendingById.set(id, pending);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      session.socket.send(frame, (err) => {
        if (err)
          this.settle(
            id,
            new RelayError(
              'WU_MCP_DISCONNECTED',
              'The page disconnected before the command was sent.',
            ),
          );
      });
    });
  }

  /** Rejects pending requests, closes sockets (terminating those that linger) and the listener. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.pendingById.keys()])
      this.settle(
        id,
        new RelayError('WU_MCP_CLOSED', 'The relay closed before the page answered.'),
      );
    const sockets = [...this.sessions].map((s) => s.socket);
    for (const s of this.sessions) clearTimeout(s.authTimer);
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === 3) return resolve();
            const force = setTimeout(() => {
              socket.terminate();
              resolve();
            }, this.closeGraceMs);
            socket.once('close', () => {
              clearTimeout(force);
              resolve();
            });
            socket.close(1001, 'relay closing');
          }),
      ),
    );
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const origin = req.headers.origin;
    if (this.closed || !isOriginAllowed(origin, this.config.allowedOrigins)) {
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 19\r\n\r\nOrigin not allowed\n',
      );
      socket.destroy();
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, origin!));
  }

  private accept(socket: WebSocket, origin: string): void {
    const session: Session = {
      socket,
      origin,
      relayNonce: randomBytes(32).toString('base64url'),
      authenticated: false,
      authTimer: undefined,
    };
    this.sessions.add(session);
    session.authTimer = setTimeout(
      () => this.refuse(session, 'WU_MCP_AUTH_TIMEOUT'),
      this.config.authTimeout,
    );
    socket.on('message', (data, isBinary) => this.receive(session, data, isBinary));
    socket.on('error', (err) => this.logger.error('bridge socket error:', err.message));
    socket.on('close', () => this.drop(session));
    socket.send(JSON.stringify({ type: 'hello', versions: [2, 1], nonce: session.relayNonce }));
  }

  private receive(session: Session, data: RawData, isBinary: boolean): void {
    if (isBinary) return;
    let frame: Record<string, unknown>;
    try {
      const parsed = JSON.parse(String(data)) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return;
      frame = parsed as Record<string, unknown>;
    } catch {
      return;
    }
    if (!session.authenticated) {
      if (frame.type === 'auth') this.authenticate(session, frame);
      return;
    }
    if (frame.type === 'response' && typeof frame.id === 'string') {
      const pending = this.pendingById.get(frame.id);
      // Only the socket the request went to may answer it.
      if (!pending || pending.socket !== session.socket) return;
      if (frame.error !== undefined && frame.error !== null) {
        const e = frame.error as { code?: unknown; message?: unknown };
        this.settle(
          frame.id,
          new RelayError(
            typeof e.code === 'string' ? e.code : 'WU_BRIDGE_ERROR',
            typeof e.message === 'string' ? e.message : 'The page answered with an error.',
            true,
          ),
        );
      } else this.settle(frame.id, undefined, frame.result);
    }
  }

  private authenticate(session: Session, frame: Record<string, unknown>): void {
    const decision = decideAuth(frame, {
      tokenDigest: this.tokenDigest,
      insecure: this.config.insecure,
      relayNonce: session.relayNonce,
      origin: session.origin,
      nonces: this.nonces,
      bridgeActive: this.conectado(),
    });
    if (!decision.admit) return this.refuse(session, decision.code, decision.version);
    this.admit(session);
    session.socket.send(JSON.stringify(decision.reply));
  }

  private admit(session: Session): void {
    clearTimeout(session.authTimer);
    session.authenticated = true;
    this.active = session;
    this.logger.info?.(`page bridge connected from ${session.origin}`);
  }

  private refuse(session: Session, code: string, version: 1 | 2 = 2): void {
    clearTimeout(session.authTimer);
    if (session.socket.readyState !== 1) return;
    const frame =
      version === 1
        ? { type: 'auth_result', success: false, reason: code }
        : { type: 'auth_error', code };
    session.socket.send(JSON.stringify(frame), () => session.socket.close(1008, code));
    // A peer that never acknowledges the close is cut off.
    setTimeout(() => session.socket.terminate(), 1000).unref();
  }

  private drop(session: Session): void {
    clearTimeout(session.authTimer);
    this.sessions.delete(session);
    if (this.active === session) {
      this.active = null;
      this.logger.info?.('page bridge disconnected');
    }
    for (const [id, p] of this.pendingById) {
      if (p.socket === session.socket)
        this.settle(
          id,
          new RelayError(
            'WU_MCP_DISCONNECTED',
            `The page disconnected before answering '${p.command}'; reconnect it and retry.`,
          ),
        );
    }
  }

  private sendCancel(socket: WebSocket, id: string): void {
    if (socket.readyState === 1) socket.send(JSON.stringify({ type: 'cancel', id }));
  }

  private settle(id: string, error: RelayError | undefined, result?: unknown): void {
    const p = this.pendingById.get(id);
    if (!p) return;
    this.pendingById.delete(id);
    clearTimeout(p.timer);
    p.cleanup();
    if (error) p.reject(error);
    else p.resolve(result);
  }
}
