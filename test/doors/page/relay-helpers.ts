/** A relay on a free port and a hand-driven bridge socket, for protocol tests. */
import { WebSocket } from 'ws';
import { createHash, createHmac } from 'node:crypto';
import { loadConfig, type RelayConfig } from '../../../src/doors/page/config.js';
import { Puente } from '../../../src/doors/page/puente.js';

export const TOKEN = 'relay-test-token-0123456789';
export const ORIGIN = 'http://127.0.0.1:5555';

export async function startRelay(env: Record<string, string> = {}, closeGraceMs = 300) {
  const config: RelayConfig = Object.freeze({
    ...loadConfig({ WU_MCP_TOKEN: TOKEN, ...env }),
    port: 0,
  });
  const puente = new Puente(config, { logger: { error: () => undefined }, closeGraceMs });
  await puente.ready();
  return { puente, url: `ws://127.0.0.1:${puente.address()!.port}` };
}

// Computed here with node:crypto directly, independent of the relay's helpers.
export const K = (token = TOKEN) => createHash('sha256').update(token, 'utf8').digest();
export const bridgeProofOf = (nr: string, nb: string, origin = ORIGIN, token = TOKEN) =>
  createHmac('sha256', K(token))
    .update(`wu-mcp/v2/bridge\n${nr}\n${nb}\n${origin}`)
    .digest('base64url');
export const relayProofOf = (nb: string, nr: string, token = TOKEN) =>
  createHmac('sha256', K(token)).update(`wu-mcp/v2/relay\n${nb}\n${nr}`).digest('base64url');

export interface TestBridge {
  ws: WebSocket;
  next(): Promise<Record<string, unknown>>;
  send(frame: unknown): void;
  closed: Promise<number>;
}

export function dial(url: string, origin: string | null = ORIGIN): Promise<TestBridge> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, origin === null ? {} : { origin });
    const queue: Record<string, unknown>[] = [];
    const waiters: ((m: Record<string, unknown>) => void)[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      const w = waiters.shift();
      if (w) w(m);
      else queue.push(m);
    });
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.once('open', () =>
      resolve({
        ws,
        closed,
        send: (f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)),
        next: () =>
          new Promise((r, j) => {
            const m = queue.shift();
            if (m) return r(m);
            const t = setTimeout(() => j(new Error('no frame within 3 s')), 3000);
            waiters.push((x) => {
              clearTimeout(t);
              r(x);
            });
          }),
      }),
    );
    ws.once('unexpected-response', (_req, res) =>
      reject(Object.assign(new Error('rejected'), { status: res.statusCode })),
    );
    ws.once('error', reject);
  });
}

/** Dials and completes the v2 handshake; returns the bridge and the nonces used. */
export async function authenticated(
  url: string,
  nb = 'bridge-nonce-' + Math.random().toString(36).slice(2),
) {
  const b = await dial(url);
  const hello = await b.next();
  const nr = hello.nonce as string;
  b.send({ type: 'auth', version: 2, nonce: nb, proof: bridgeProofOf(nr, nb) });
  const ok = await b.next();
  return { b, nr, nb, ok };
}
