/**
 * The page door's round trip (issue #6): an SDK v2 MCP client calls
 * `wu_status` on the relay's MCP server (`createMcpServer` from
 * `airlock/page`, over the SDK's linked in-memory transports, so the kernel
 * pipeline runs), the relay (`Puente`) forwards it over a loopback WebSocket
 * to a Node "page" that did the v2 handshake and answers every request at
 * once, and the answer comes back. The baseline is a bare `ws` echo on
 * loopback (one small JSON frame, await the echo), measured in the same
 * rounds; the relay alone (`Puente.enviar`, no MCP) is the middle row.
 *
 * Run with `BENCH_PARTS=page npm run bench` (part of bench/run.mjs).
 * Env: BENCH_PAGE_CALLS (2000 sequential calls per row).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { WebSocket, WebSocketServer } from 'ws';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { Puente, createMcpServer, loadConfig } from '../dist/relay/index.js';

const int = (name, fallback) => {
  const n = Number.parseInt(process.env[name] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};
export const PAGE_CALLS = int('BENCH_PAGE_CALLS', 2000);
const ORIGIN = 'http://127.0.0.1';
const STATUS = { framework: 'bench', apps: [], storeKeys: [], actions: 0, events: 0 };

/** One-shot reply waiting on a socket: `ask(frame)` resolves with the next message. */
function asker(ws) {
  let waiting = null;
  ws.on('message', (data) => {
    const w = waiting;
    waiting = null;
    w?.(data);
  });
  return (frame) =>
    new Promise((resolve) => {
      waiting = resolve;
      ws.send(frame);
    });
}

/** A Node stand-in for the page bridge: v2 handshake, then answers every request at once. */
async function startPage(url, token) {
  const ws = new WebSocket(url, { origin: ORIGIN });
  const hello = JSON.parse(String((await once(ws, 'message'))[0]));
  const nb = randomBytes(24).toString('base64url');
  const key = createHash('sha256').update(token, 'utf8').digest();
  const proof = createHmac('sha256', key)
    .update(`wu-mcp/v2/bridge\n${hello.nonce}\n${nb}\n${ORIGIN}`)
    .digest('base64url');
  ws.send(JSON.stringify({ type: 'auth', version: 2, nonce: nb, proof }));
  const ok = JSON.parse(String((await once(ws, 'message'))[0]));
  if (ok.type !== 'auth_ok') throw new Error(`page handshake refused: ${JSON.stringify(ok)}`);
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data));
    if (frame.type === 'request')
      ws.send(JSON.stringify({ type: 'response', id: frame.id, result: STATUS }));
  });
  return ws;
}

async function startEcho() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  wss.on('connection', (s) =>
    s.on('message', (data, isBinary) => s.send(data, { binary: isBinary })),
  );
  const ws = new WebSocket(`ws://127.0.0.1:${wss.address().port}`);
  await once(ws, 'open');
  return {
    ask: asker(ws),
    async close() {
      ws.close();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

/** `{ interleave, sequential, stats, ratio }` are bench/run.mjs's helpers. */
export async function benchPage({ interleave, sequential, stats, ratio }) {
  const token = randomBytes(24).toString('base64url');
  const config = Object.freeze({
    ...loadConfig({ WU_MCP_TOKEN: token, WU_MCP_ORIGINS: ORIGIN }),
    host: '127.0.0.1',
    port: 0,
  });
  const puente = await new Puente(config, { logger: { error: () => undefined } }).ready();
  const page = await startPage(`ws://127.0.0.1:${puente.address().port}`, token);
  const server = createMcpServer(puente, config);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'airlock-bench', version: '1.0.0' });
  await client.connect(clientSide);
  const echo = await startEcho();
  const frame = JSON.stringify({ type: 'request', id: '1', command: 'status', params: {} });

  try {
    const legs = [
      {
        key: 'mcp → relay → page',
        what: 'tools/call wu_status',
        run: sequential(async () => {
          const r = await client.callTool({ name: 'wu_status', arguments: {} });
          if (r.isError) throw new Error(`wu_status failed: ${JSON.stringify(r).slice(0, 300)}`);
        }),
      },
      {
        key: 'relay → page',
        what: "Puente.enviar('status')",
        run: sequential(() => puente.enviar('status', {})),
      },
      { key: 'ws echo', what: 'small JSON frame', run: sequential(() => echo.ask(frame)) },
    ];
    for (const l of legs) await l.run(Math.max(200, PAGE_CALLS / 10)); // warm-up
    const samples = await interleave(legs, PAGE_CALLS);
    const rows = legs.map((l) => ({
      path: l.key,
      what: l.what,
      ...stats(samples.get(l.key).ns, samples.get(l.key).wallNs),
    }));
    const [mcp, relay, base] = rows;
    const vs = (a) => ({
      median: ratio(a.medianUs, base.medianUs),
      p95: ratio(a.p95Us, base.p95Us),
      callsPerSecond: ratio(a.perSecond, base.perSecond),
    });
    return {
      calls: PAGE_CALLS,
      tool: 'wu_status',
      rows,
      ratios: { 'mcp/echo': vs(mcp), 'relay/echo': vs(relay) },
    };
  } finally {
    await client.close();
    await server.close();
    page.close();
    await puente.close();
    await echo.close();
  }
}

export function printPage(results, table) {
  console.log(
    `page door: ${results.tool} round trip (SDK v2 client, in-memory MCP transport, relay over loopback WebSocket to a Node page) against a bare ws echo; ${results.calls} sequential calls per row\n`,
  );
  console.log(
    table(
      ['path', 'what', 'median µs', 'p95 µs', 'calls/s'],
      results.rows.map((r) => [r.path, r.what, r.medianUs, r.p95Us, r.perSecond]),
    ),
  );
  for (const [pair, r] of Object.entries(results.ratios))
    console.log(`${pair}: median ×${r.median}, p95 ×${r.p95}, calls/s ×${r.callsPerSecond}`);
  console.log('');
}
