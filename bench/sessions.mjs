/**
 * `sessions` (issue #16): what an idle 2025-era MCP session holds in the
 * server's heap. The servers run in a child process started with
 * --expose-gc (bench/sessions-server.mjs): Airlock's HTTP app on the
 * workspace `airlock serve` builds (default doors), and a bare SDK v2
 * low-level `Server` with one tool wired the same way (the baseline). For
 * each, BENCH_SESSIONS (500) sessions are opened (`initialize`, then
 * `notifications/initialized`; no GET stream, each request on its own
 * connection, closed after), after 200 warm-up sessions each, and the
 * child's heap after full collections is read before and after: bytes per
 * session = growth / sessions. Every session is then checked to be still
 * held (Airlock's per-agent cap is met by spreading sessions over agents).
 */
import { fork } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

const PROTOCOL = '2025-06-18';
const WARM_UP = 200;

/** One POST on its own connection; resolves with the status, headers and body. */
function post(url, message, headers) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(message);
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function openSession(url, token) {
  const auth = token ? { authorization: `Bearer ${token}` } : {};
  const init = await post(
    url,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: PROTOCOL,
        capabilities: {},
        clientInfo: { name: 'airlock-bench', version: '1.0.0' },
      },
    },
    auth,
  );
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || !id)
    throw new Error(`initialize failed: ${init.status} ${init.body.slice(0, 200)}`);
  const done = await post(
    url,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { ...auth, 'mcp-session-id': id, 'mcp-protocol-version': PROTOCOL },
  );
  if (done.status !== 202) throw new Error(`initialized failed: ${done.status} ${done.body}`);
  return id;
}

export async function benchSessions({ sessions = 500 } = {}) {
  const child = fork(fileURLToPath(new URL('./sessions-server.mjs', import.meta.url)), [], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () => new Promise((resolve) => child.once('message', resolve));
  const { urls, tokens } = await next();
  const heap = async () => {
    const answer = next();
    child.send('heap');
    return (await answer).heap;
  };
  const opened = { airlock: [], 'sdk-server': [] };
  const open = async (server, n) => {
    const own = tokens[server];
    for (let i = 0; i < n; i++) {
      const token = own[opened[server].length % own.length];
      opened[server].push({ id: await openSession(urls[server], token), token });
    }
  };
  /** Every session opened is still held (none evicted by a cap): each answers a ping. */
  const checkHeld = async (server) => {
    for (const { id, token } of opened[server]) {
      const answer = await post(
        urls[server],
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          'mcp-session-id': id,
          'mcp-protocol-version': PROTOCOL,
        },
      );
      if (answer.status !== 200)
        throw new Error(`${server}: session ${id} is gone (${answer.status}); a cap closed it`);
    }
  };
  const rows = [];
  try {
    // Warm-up: code paths compiled (optimized code would count as sessions'
    // heap otherwise) and lazy state (prepared statements, caches) made.
    for (const server of ['sdk-server', 'airlock']) await open(server, WARM_UP);
    for (const server of ['sdk-server', 'airlock']) {
      const before = await heap();
      await open(server, sessions);
      const after = await heap();
      rows.push({ server, sessions, bytesPerSession: Math.round((after - before) / sessions) });
    }
    for (const server of ['sdk-server', 'airlock']) await checkHeld(server);
  } finally {
    child.send('close');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const base = rows.find((r) => r.server === 'sdk-server').bytesPerSession;
  for (const r of rows) r.overSdk = r.bytesPerSession - base;
  return { sessions, rows };
}

export function printSessions(result, table) {
  console.log(
    `sessions: heap per idle 2025-era session after ${result.sessions} sessions (full GC in the server process)\n`,
  );
  console.log(
    table(
      ['server', 'measure', 'bytes/session', 'over sdk'],
      result.rows.map((r) => [r.server, 'idle session', r.bytesPerSession, r.overSdk]),
    ),
  );
  console.log('');
}
