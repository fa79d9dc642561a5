/** A hand-written relay for bridge tests: it can lie about the token, or drop the bridge after auth. */
import { WebSocketServer, type WebSocket } from 'ws';
import { randomBytes } from 'node:crypto';
import { bridgeProofOf, relayProofOf } from './relay-helpers.js';

export interface FakeRelay {
  url: string;
  connections: number;
  authenticated: number;
  sockets: WebSocket[];
  close(): Promise<void>;
}

export async function fakeRelay(options: {
  token: string;
  /** Answer auth_ok with a proof that does not come from the token. */
  lie?: boolean;
}): Promise<FakeRelay> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const state: FakeRelay = {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    connections: 0,
    authenticated: 0,
    sockets: [],
    close: () =>
      new Promise<void>((r) => {
        for (const s of state.sockets) s.terminate();
        wss.close(() => r());
      }),
  };
  wss.on('connection', (ws, req) => {
    state.connections++;
    state.sockets.push(ws);
    const nr = randomBytes(32).toString('base64url');
    ws.send(JSON.stringify({ type: 'hello', versions: [2, 1], nonce: nr }));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { type: string; nonce: string; proof: string };
      if (m.type !== 'auth') return;
      const origin = req.headers.origin ?? '';
      if (m.proof !== bridgeProofOf(nr, m.nonce, origin, options.token)) {
        ws.send(JSON.stringify({ type: 'auth_error', code: 'WU_MCP_AUTH_FAILED' }));
        return;
      }
      const proof = options.lie
        ? relayProofOf(m.nonce, nr, 'some-other-token-000000')
        : relayProofOf(m.nonce, nr, options.token);
      state.authenticated++;
      ws.send(JSON.stringify({ type: 'auth_ok', version: 2, proof }));
    });
  });
  return state;
}
