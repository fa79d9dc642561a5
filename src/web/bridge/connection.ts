/**
 * The bridge's one socket to the relay (spec/page.md "Bridge" and "Wire
 * protocol"): validation of url and token, the v2 mutual HMAC handshake (the
 * token never crosses the socket; a relay that cannot prove it is dropped),
 * insecure loopback mode, commands with cancellation, and bounded-backoff
 * reconnection after an accidental drop. The token lives only in this
 * module's memory: never in a URL, the store or storage.
 */
import { BridgeError } from './errors.js';
import { randomNonce, sameProof, tokenKey } from './crypto.js';
import { runCommand } from './commands.js';
import { install, uninstall } from './diagnostics.js';
import { REDACTED, redactText } from './redact.js';

export interface ConnectOptions {
  /** The session token from a trusted host integration (never from a bundle). */
  token?: string;
  /** Connect without a token: loopback only, and the relay must run with WU_MCP_INSECURE=1. */
  insecure?: boolean;
  /** Reconnect after an accidental drop (default true). */
  reconnect?: boolean;
  /** Largest frame the bridge sends (default 1 MiB, the relay's default limit). */
  maxPayload?: number;
}

export type BridgeState = 'idle' | 'connecting' | 'authenticated';

interface Credentials {
  url: string;
  token: string | null;
  insecure: boolean;
  reconnect: boolean;
  maxPayload: number;
}

const MAX_RECONNECTS = 8;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 15_000;

let socket: WebSocket | null = null;
let state: BridgeState = 'idle';
let pendingConnect: Promise<void> | null = null;
let creds: Credentials | null = null;
let intent = false;
let attempts = 0;
let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
const running = new Map<string, AbortController>();
/** Rejects the connect() in progress (disconnect() during the handshake). */
let abandon: ((error: BridgeError) => void) | null = null;
const statusListeners = new Set<(state: BridgeState, detail?: string) => void>();

function setState(next: BridgeState, detail?: string) {
  state = next;
  for (const l of statusListeners) l(next, detail);
}

export function onStatus(listener: (state: BridgeState, detail?: string) => void): () => void {
  statusListeners.add(listener);
  return () => statusListeners.delete(listener);
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '[::1]' ||
    hostname === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

function validate(url: string, options: ConnectOptions): Credentials {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BridgeError(
      'WU_MCP_INVALID_URL',
      `'${url}' is not a WebSocket URL such as ws://localhost:19100.`,
    );
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')
    throw new BridgeError('WU_MCP_INVALID_URL', 'The relay URL must start with ws:// or wss://.');
  if (parsed.search || parsed.username || parsed.password)
    throw new BridgeError(
      'WU_MCP_INVALID_URL',
      'The relay URL must not carry credentials or a query (pass the token in options).',
    );
  const loopback = isLoopback(parsed.hostname);
  if (!loopback && parsed.protocol !== 'wss:')
    throw new BridgeError(
      'WU_MCP_INSECURE_URL',
      'Off loopback the relay must be reached over wss://.',
    );
  const token = typeof options.token === 'string' && options.token !== '' ? options.token : null;
  if (token === null && !(options.insecure === true && loopback))
    throw new BridgeError(
      'WU_MCP_TOKEN_REQUIRED',
      'A token is required: pass {token} from a trusted host integration ({insecure: true} only on loopback).',
    );
  return {
    url: parsed.toString(),
    token,
    insecure: token === null,
    reconnect: options.reconnect !== false,
    maxPayload: options.maxPayload ?? 1024 * 1024,
  };
}

/** Sends a frame with the token scrubbed from it, whatever key it hides under. */
function send(ws: WebSocket, frame: Record<string, unknown>) {
  let text = JSON.stringify(frame);
  const token = creds?.token;
  if (token) text = text.split(JSON.stringify(token).slice(1, -1)).join(REDACTED);
  if (
    new TextEncoder().encode(text).length > (creds?.maxPayload ?? 1024 * 1024) &&
    frame.type === 'response'
  ) {
    text = JSON.stringify({
      type: 'response',
      id: frame.id,
      error: {
        code: 'WU_RESULT_TOO_LARGE',
        message:
          'The answer is larger than the relay accepts; narrow the request (a selector, a lower limit).',
      },
    });
  }
  if (ws.readyState === WebSocket.OPEN) ws.send(text);
}

function handleRequest(ws: WebSocket, id: string, command: string, params: unknown) {
  const controller = new AbortController();
  running.set(id, controller);
  Promise.resolve()
    .then(() => runCommand(command, params, controller.signal))
    .then(
      (result) => {
        if (!controller.signal.aborted) send(ws, { type: 'response', id, result: result ?? null });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const e = error as { code?: unknown; message?: unknown };
        send(ws, {
          type: 'response',
          id,
          error: {
            code: typeof e?.code === 'string' ? e.code : 'WU_BRIDGE_ERROR',
            message: redactText(typeof e?.message === 'string' ? e.message : String(error)),
          },
        });
      },
    )
    .finally(() => running.delete(id));
}

function abortRunning() {
  for (const c of running.values())
    c.abort(new BridgeError('WU_MCP_DISCONNECTED', 'The relay connection closed.'));
  running.clear();
}

/** A relay frame as an object, or null for anything else (binary, not JSON, not an object). */
function frameOf(data: unknown): Record<string, unknown> | null {
  if (typeof data !== 'string') return null;
  try {
    const msg: unknown = JSON.parse(data);
    return msg && typeof msg === 'object' ? (msg as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** After authentication: a request to run, or the agent cancelling one. */
function onRelayMessage(ws: WebSocket, msg: Record<string, unknown>) {
  if (msg.type === 'request' && typeof msg.id === 'string' && typeof msg.command === 'string')
    handleRequest(ws, msg.id, msg.command, msg.params);
  else if (msg.type === 'cancel' && typeof msg.id === 'string')
    running
      .get(msg.id)
      ?.abort(new BridgeError('WU_MCP_CANCELLED', 'The agent cancelled the call.'));
}

function open(c: Credentials): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const ws = new WebSocket(c.url);
    socket = ws;
    setState('connecting');
    const key = c.token !== null ? tokenKey(c.token) : null;
    key?.catch(() => undefined);
    let settled = false;
    let bridgeNonce = '';
    let relayNonce = '';
    abandon = (error) => {
      if (!settled) {
        settled = true;
        reject(error);
      }
    };
    const fail = (error: BridgeError, stop: boolean) => {
      if (stop) intent = false;
      if (!settled) {
        settled = true;
        reject(error);
      }
      setState(state, error.code);
      ws.close(1000);
    };
    const handshake = async (msg: Record<string, unknown>) => {
      if (msg.type === 'hello') {
        const versions = Array.isArray(msg.versions) ? msg.versions : [];
        if (!versions.includes(2) || typeof msg.nonce !== 'string')
          // Falling back to v1 would send the token itself to whoever answers; refuse.
          return fail(
            new BridgeError(
              'WU_MCP_VERSION_UNSUPPORTED',
              'The relay does not speak protocol v2; update it.',
            ),
            true,
          );
        relayNonce = msg.nonce;
        if (!key) return send(ws, { type: 'auth', version: 2, insecure: true });
        bridgeNonce = randomNonce();
        const proof = await (
          await key
        ).sign(`wu-mcp/v2/bridge\n${relayNonce}\n${bridgeNonce}\n${location.origin}`);
        send(ws, { type: 'auth', version: 2, nonce: bridgeNonce, proof });
        return;
      }
      if (msg.type === 'auth_ok') {
        if (key) {
          if (!bridgeNonce)
            return fail(
              new BridgeError('WU_MCP_AUTH_FAILED', 'The relay skipped the handshake.'),
              true,
            );
          const expected = await (await key).sign(`wu-mcp/v2/relay\n${bridgeNonce}\n${relayNonce}`);
          if (!sameProof(msg.proof, expected))
            return fail(
              new BridgeError(
                'WU_MCP_AUTH_FAILED',
                'The relay could not prove it knows the token; dropped it.',
              ),
              true,
            );
        } else if (msg.insecure !== true) {
          return fail(
            new BridgeError('WU_MCP_AUTH_FAILED', 'The relay did not accept insecure mode.'),
            true,
          );
        }
        attempts = 0;
        settled = true;
        setState('authenticated');
        resolve();
        return;
      }
      if (msg.type === 'auth_error') {
        const code = typeof msg.code === 'string' ? msg.code : 'WU_MCP_AUTH_FAILED';
        // A timeout may pass on retry; a wrong token or another active bridge will not.
        return fail(
          new BridgeError(code, `The relay refused the bridge (${code}).`),
          code !== 'WU_MCP_AUTH_TIMEOUT',
        );
      }
    };
    ws.onmessage = (event: MessageEvent) => {
      const msg = frameOf(event.data);
      if (!msg) return;
      if (state !== 'authenticated') {
        handshake(msg).catch((error: unknown) =>
          fail(
            error instanceof BridgeError
              ? error
              : new BridgeError('WU_MCP_AUTH_FAILED', String(error)),
            true,
          ),
        );
        return;
      }
      onRelayMessage(ws, msg);
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      const wasAuthenticated = state === 'authenticated';
      abortRunning();
      setState('idle');
      if (!settled) {
        settled = true;
        reject(
          new BridgeError(
            'WU_MCP_CONNECTION_FAILED',
            `Could not connect to the relay at ${c.url}.`,
          ),
        );
      }
      if (wasAuthenticated && intent && c.reconnect) scheduleReconnect(c);
    };
  });
}

function scheduleReconnect(c: Credentials) {
  if (attempts >= MAX_RECONNECTS) {
    intent = false;
    uninstall();
    setState('idle', 'WU_MCP_RECONNECT_EXHAUSTED');
    return;
  }
  const delay =
    Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempts) * (0.75 + Math.random() * 0.5);
  attempts++;
  reconnectTimer = setTimeout(() => {
    reconnectTimer = undefined;
    if (!intent || socket) return;
    pendingConnect = open(c).finally(() => (pendingConnect = null));
    pendingConnect.catch(() => {
      if (intent && !socket) scheduleReconnect(c);
    });
  }, delay);
}

/**
 * Connects the page to the relay and authenticates; resolves once
 * authenticated. Never opens a second socket while connecting or connected.
 *
 * @example
 * const { url, token } = await (await fetch('/api/v1/page/bridge-token')).json();
 * await connect(url, { token });
 */
export function connect(url = 'ws://localhost:19100', options: ConnectOptions = {}): Promise<void> {
  if (pendingConnect) return pendingConnect;
  if (socket && state === 'authenticated') return Promise.resolve();
  let c: Credentials;
  try {
    c = validate(url, options);
  } catch (error) {
    return Promise.reject(error);
  }
  creds = c;
  intent = true;
  attempts = 0;
  install();
  pendingConnect = open(c).finally(() => (pendingConnect = null));
  // A first attempt that fails leaves nothing installed behind it.
  pendingConnect.catch(() => {
    if (!socket && reconnectTimer === undefined) {
      intent = false;
      uninstall();
    }
  });
  return pendingConnect;
}

/** Closes the socket, stops reconnecting, and releases every interceptor the bridge installed. */
export function disconnect(): void {
  intent = false;
  clearTimeout(reconnectTimer);
  reconnectTimer = undefined;
  abortRunning();
  const ws = socket;
  socket = null;
  pendingConnect = null;
  abandon?.(
    new BridgeError(
      'WU_MCP_DISCONNECTED',
      'disconnect() was called before the bridge authenticated.',
    ),
  );
  abandon = null;
  ws?.close(1000, 'disconnect');
  setState('idle');
  uninstall();
  creds = null;
}

/** True while the socket is open and the relay is authenticated. */
export function isConnected(): boolean {
  return state === 'authenticated' && socket?.readyState === WebSocket.OPEN;
}

export const bridgeState = (): BridgeState => state;
