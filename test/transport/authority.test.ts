/**
 * The owner and the agents are separate principals (spec/authority.md §1–§2,
 * §4): each attack a hostile agent, a second agent or a page on another local
 * port would try, over real HTTP, and that it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createLedgerDoor } from '../../src/doors/testing/ledger.js';
import { createHttpApp, type HttpApp } from '../../src/transport/http/http-app.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { testKernel, type TestKernel } from '../helpers/kernel.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { agentHeaders, ownerHeaders } from '../helpers/principals.js';
import { newToken } from '../../src/kernel/authority/principals.js';
import { waitFor } from '../helpers/wait.js';

let tk: TestKernel;
let app: HttpApp;
let base: string;
let owner: Record<string, string>;
let alice: string;
let bob: string;

const tokenOf = (h: Record<string, string>) => h.authorization!.replace('Bearer ', '');

beforeAll(async () => {
  tk = await testKernel([createLedgerDoor()]);
  app = createHttpApp({ kernel: tk.kernel, logger: silentLogger });
  base = `http://127.0.0.1:${(await app.listen(0, '127.0.0.1')).port}`;
  owner = await ownerHeaders(tk.kernel);
  alice = tokenOf(await agentHeaders(tk.kernel, 'alice'));
  bob = tokenOf(await agentHeaders(tk.kernel, 'bob'));
});
afterAll(async () => {
  await app.close();
  await tk.dispose();
});

const askWrite = (client: Client) =>
  client.callTool({ name: 'ledger_request_write_access', arguments: {} }).then(toolJson);

async function pendingFor(agent: string) {
  const res = await fetch(`${base}/api/v1/approvals`, { headers: owner });
  const { approvals } = (await res.json()) as {
    approvals: { id: string; connection: string; status: string }[];
  };
  return approvals.filter((a) => a.connection.startsWith(`agent:${agent}`));
}

describe('agents cannot act as the owner', () => {
  it('an agent token cannot approve its own request over REST (403), and the request stays pending', async () => {
    const client = await connectClient(`${base}/mcp`, { token: alice, pin: MODERN_PROTOCOL });
    const first = await askWrite(client);
    expect(first.code).toBe('approvalRequired');
    const res = await fetch(`${base}/api/v1/approvals/${String(first.approvalID)}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ resource: 'main' }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'notAuthorized' });
    expect((await askWrite(client)).code).toBe('approvalRequired');
    expect((await pendingFor('alice')).map((a) => a.id)).toContain(first.approvalID);
    await client.close();
  });

  it('every owner route refuses an agent token with 403 notAuthorized', async () => {
    const headers = { authorization: `Bearer ${alice}` };
    for (const path of ['approvals', 'grants', 'audit', 'jobs']) {
      const res = await fetch(`${base}/api/v1/${path}`, { headers });
      expect(res.status, path).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('notAuthorized');
    }
  });

  it('a form elicitation answered by the client is not consent: the call waits for the owner', async () => {
    const client = new Client(
      { name: 'self-approver', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    let asked = 0;
    client.setRequestHandler('elicitation/create', async () => {
      asked += 1;
      return { action: 'accept', content: { approve: true, resource: 'main' } } as never;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${bob}` } },
      }),
    );
    const answer = await askWrite(client);
    expect(answer.code).toBe('approvalRequired');
    expect(asked).toBe(0);
    expect(await pendingFor('bob')).toHaveLength(1);
    await client.close();
  });
});

describe('URL-mode elicitation points at the owner’s inbox', () => {
  /** A client that shows links: the "person" behind it is the owner, who approves in the inbox. */
  async function linkClient(token: string, pin?: string) {
    const client = new Client(
      { name: 'link-shower', version: '1' },
      {
        capabilities: { elicitation: { url: {} } },
        ...(pin ? { versionNegotiation: { mode: { pin } } } : {}),
      },
    );
    const shown: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const params = request.params as { mode?: string; url?: string };
      expect(params.mode).toBe('url');
      shown.push(params.url!);
      const id = decodeURIComponent(params.url!.split('/').pop()!);
      const approved = await fetch(`${base}/api/v1/approvals/${id}/approve`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ resource: 'main' }),
      });
      expect(approved.status).toBe(200);
      return { action: 'accept' } as never;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return { client, shown };
  }

  it('a 2025-era client is shown the approval’s link, and the call completes once the owner approves there', async () => {
    const token = tokenOf(await agentHeaders(tk.kernel, 'linker-2025'));
    const { client, shown } = await linkClient(token);
    const answer = await askWrite(client);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatch(new RegExp(`^${base}/#/approvals/[0-9a-f-]{36}$`));
    expect(answer).toMatchObject({ grantID: expect.any(String) });
    await client.close();
  });

  it('a 2026-era client gets input_required with the link, and its retry runs once the owner approved', async () => {
    const token = tokenOf(await agentHeaders(tk.kernel, 'linker-2026'));
    const { client, shown } = await linkClient(token, MODERN_PROTOCOL);
    const answer = await askWrite(client);
    expect(shown).toHaveLength(1);
    expect(answer).toMatchObject({ grantID: expect.any(String) });
    await client.close();
  });
});

describe('owner actions are audited as the owner', () => {
  it('records approvals and grant revocations with connection owner and their result', async () => {
    const henry = tokenOf(await agentHeaders(tk.kernel, 'henry'));
    const client = await connectClient(`${base}/mcp`, { token: henry, pin: MODERN_PROTOCOL });
    const asked = await askWrite(client);
    const post = (path: string) =>
      fetch(`${base}/api/v1/${path}`, {
        method: path.startsWith('grants') ? 'DELETE' : 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: path.startsWith('grants') ? undefined : JSON.stringify({ resource: 'main' }),
      });
    expect((await post(`approvals/${String(asked.approvalID)}/approve`)).status).toBe(200);
    expect((await post('grants/no-such-grant')).status).toBe(404);
    const { entries } = (await (
      await fetch(`${base}/api/v1/audit?limit=10000`, { headers: owner })
    ).json()) as { entries: { connection: string; tool: string; result: string }[] };
    const mine = entries.filter((e) => e.connection === 'owner');
    expect(mine).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: 'approvals.approve', result: 'ok' }),
        expect.objectContaining({ tool: 'grants.revoke', result: 'notFound' }),
      ]),
    );
    await client.close();
  });
});

describe('route audiences', () => {
  it('/api/v1/openapi.json lists every route with its audience, and agents may read it', async () => {
    const res = await fetch(`${base}/api/v1/openapi.json`, {
      headers: { authorization: `Bearer ${alice}` },
    });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { 'x-audience': string }>>;
    };
    const audience = (path: string, method: string) => doc.paths[path]?.[method]?.['x-audience'];
    expect(audience('/api/v1/approvals', 'get')).toBe('owner');
    expect(audience('/api/v1/approvals/{id}/approve', 'post')).toBe('owner');
    expect(audience('/api/v1/agents', 'post')).toBe('owner');
    expect(audience('/api/v1/session', 'post')).toBe('public');
    expect(audience('/api/v1/events', 'get')).toBe('agent');
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods))
        expect(['owner', 'agent', 'public'], `${method} ${path}`).toContain(op['x-audience']);
  });
});

describe('credentials', () => {
  it('without a credential, MCP and owner routes answer 401 saying how to get one', async () => {
    const mcp = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(401);
    expect(JSON.stringify(await mcp.json())).toContain('airlock agents add');
    const rest = await fetch(`${base}/api/v1/approvals`);
    expect(rest.status).toBe(401);
    expect(((await rest.json()) as { message: string }).message).toContain('owner.token');
  });

  it('a wrong bearer token is refused, never taken as anonymous', async () => {
    const anonymousApp = createHttpApp({
      kernel: tk.kernel,
      logger: silentLogger,
      allowAnonymous: true,
    });
    const url = `http://127.0.0.1:${(await anonymousApp.listen(0, '127.0.0.1')).port}`;
    try {
      const res = await fetch(`${url}/api/v1/events`, {
        headers: { authorization: 'Bearer ak_wrong' },
      });
      expect(res.status).toBe(401);
    } finally {
      await anonymousApp.close();
    }
  });

  it('GET /events (the Koharu wire) is guarded like /api/v1/events: no credential, a wrong one, or a page on another port without one are refused', async () => {
    const attempts: RequestInit[] = [
      {},
      { headers: { authorization: 'Bearer ak_wrong' } },
      { headers: { origin: 'http://localhost:5173' } },
      { headers: { origin: 'http://evil.example' } },
    ];
    for (const init of attempts) {
      const wire = await fetch(`${base}/events`, init);
      const api = await fetch(`${base}/api/v1/events`, init);
      expect(wire.status).toBeGreaterThanOrEqual(400);
      expect(wire.status).toBe(api.status);
      await Promise.all([wire.body?.cancel(), api.body?.cancel()]);
    }
    // Only GET: anything else there is nothing.
    expect((await fetch(`${base}/events`, { method: 'POST', headers: owner })).status).toBe(404);
  });

  it('the owner token is not an agent token: MCP answers 403', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        ...owner,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(403);
  });

  it('anonymous agents only with allowAnonymous, and never from a page on another local port', async () => {
    const anonymousApp = createHttpApp({
      kernel: tk.kernel,
      logger: silentLogger,
      allowAnonymous: true,
    });
    const url = `http://127.0.0.1:${(await anonymousApp.listen(0, '127.0.0.1')).port}`;
    try {
      const client = await connectClient(`${url}/mcp`, { pin: MODERN_PROTOCOL });
      expect((await askWrite(client)).code).toBe('approvalRequired');
      await client.close();
      expect(await pendingFor('anonymous')).toHaveLength(1);
      const fromPage = await fetch(`${url}/api/v1/events`, {
        headers: { origin: 'http://localhost:5173' },
      });
      expect(fromPage.status).toBe(401);
      // The owner's routes stay the owner's: anonymous is an agent.
      expect((await fetch(`${url}/api/v1/approvals`)).status).toBe(403);
    } finally {
      await anonymousApp.close();
    }
  });
});

describe('identity hygiene', () => {
  it('another agent sending a 2025-era session id finds nothing', async () => {
    const client = await connectClient(`${base}/mcp`, { token: alice });
    const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!;
    expect(sessionId).toBeTruthy();
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bob}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(res.status).toBe(404);
    await client.close();
  });

  it('2026-era clients with different agent tokens keep separate grants', async () => {
    const carol = tokenOf(await agentHeaders(tk.kernel, 'carol'));
    const dave = tokenOf(await agentHeaders(tk.kernel, 'dave'));
    const a = await connectClient(`${base}/mcp`, { token: carol, pin: MODERN_PROTOCOL });
    const b = await connectClient(`${base}/mcp`, { token: dave, pin: MODERN_PROTOCOL });
    const asked = await askWrite(a);
    const approve = await fetch(`${base}/api/v1/approvals/${String(asked.approvalID)}/approve`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ resource: 'main' }),
    });
    expect(approve.status).toBe(200);
    expect(await askWrite(a)).toMatchObject({ grantID: expect.any(String) });
    expect((await askWrite(b)).code).toBe('approvalRequired');
    await a.close();
    await b.close();
  });

  it('revoking an agent refuses its token at once and closes its sessions; another agent keeps working', async () => {
    const erin = tokenOf(await agentHeaders(tk.kernel, 'erin'));
    const legacy = await connectClient(`${base}/mcp`, { token: erin });
    const other = await connectClient(`${base}/mcp`, { token: alice, pin: MODERN_PROTOCOL });
    await legacy.listTools();
    const revoked = await tk.kernel.principals.revokeAgent('erin');
    expect(revoked).toMatchObject({ name: 'erin', revokedAt: expect.any(Number) });
    await expect(legacy.listTools()).rejects.toThrow();
    const direct = await fetch(`${base}/api/v1/events`, {
      headers: { authorization: `Bearer ${erin}` },
    });
    expect(direct.status).toBe(401);
    expect((await other.listTools()).tools.length).toBeGreaterThan(0);
    await legacy.close().catch(() => undefined);
    await other.close();
  });
});

describe('event streams follow their credential', () => {
  /** Resolves when the stream's body ends (the server closed it). */
  async function ended(res: Response) {
    const reader = res.body!.getReader();
    for (;;) if ((await reader.read()).done) return true;
  }

  it('a revoked agent’s event stream ends at once', async () => {
    const gina = tokenOf(await agentHeaders(tk.kernel, 'gina'));
    const res = await fetch(`${base}/api/v1/events`, {
      headers: { authorization: `Bearer ${gina}` },
    });
    expect(res.status).toBe(200);
    const closed = ended(res);
    await tk.kernel.principals.revokeAgent('gina');
    await expect(
      Promise.race([closed, new Promise((r) => setTimeout(() => r('still open'), 1000))]),
    ).resolves.toBe(true);
  });

  /** Signs the owner in as the web UI does: the session secret comes back in the answer. */
  async function browserSession(): Promise<Record<string, string>> {
    const signIn = await fetch(`${base}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: tokenOf(owner) }),
    });
    const { session, sessionHeader } = (await signIn.json()) as {
      session: string;
      sessionHeader: string;
    };
    return { [sessionHeader]: session };
  }

  it('a signed-out browser’s event stream ends at once', async () => {
    const session = await browserSession();
    const res = await fetch(`${base}/api/v1/events`, { headers: session });
    expect(res.status).toBe(200);
    const closed = ended(res);
    const out = await fetch(`${base}/api/v1/session`, {
      method: 'DELETE',
      headers: { ...session, origin: base },
    });
    expect(out.status).toBe(204);
    await expect(
      Promise.race([closed, new Promise((r) => setTimeout(() => r('still open'), 1000))]),
    ).resolves.toBe(true);
  });

  it('ending every owner session (owner rotate) ends every browser’s stream and request at once', async () => {
    const [one, two] = [await browserSession(), await browserSession()];
    const streams = await Promise.all(
      [one, two].map((h) => fetch(`${base}/api/v1/events`, { headers: h })),
    );
    expect(streams.map((r) => r.status)).toEqual([200, 200]);
    const closed = Promise.all(streams.map(ended));
    await tk.kernel.principals.setOwnerToken(newToken('ok_'));
    await expect(
      Promise.race([closed, new Promise((r) => setTimeout(() => r('still open'), 1000))]),
    ).resolves.toEqual([true, true]);
    await tk.kernel.principals.setOwnerToken(tokenOf(owner)); // the other tests' owner again
    for (const h of [one, two])
      expect((await fetch(`${base}/api/v1/approvals`, { headers: h })).status).toBe(401);
  });
});

describe('sessions and caps', () => {
  const initialize = (token: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
  const listWith = (token: string, sessionId: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });

  it('closing a 2025-era session cancels its pending approvals', async () => {
    const frank = tokenOf(await agentHeaders(tk.kernel, 'frank'));
    const client = await connectClient(`${base}/mcp`, { token: frank });
    expect((await askWrite(client)).code).toBe('approvalRequired');
    expect(await pendingFor('frank')).toHaveLength(1);
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await waitFor(async () => (await pendingFor('frank')).length === 0, {
      message: 'the ended session’s approval to leave the inbox',
    });
    await client.close();
  });

  it('one agent opening a 65th session replaces its own least recently used, never another agent’s', async () => {
    const greedy = tokenOf(await agentHeaders(tk.kernel, 'greedy'));
    const other = await initialize(alice);
    const otherId = other.headers.get('mcp-session-id')!;
    await other.body?.cancel();
    const ids: string[] = [];
    for (let i = 0; i < 65; i++) {
      const res = await initialize(greedy);
      expect(res.status).toBe(200);
      ids.push(res.headers.get('mcp-session-id')!);
      await res.body?.cancel();
    }
    const oldest = await listWith(greedy, ids[0]!);
    expect(oldest.status).toBe(404);
    await oldest.body?.cancel();
    const newest = await listWith(greedy, ids[64]!);
    expect(newest.status).toBe(200);
    await newest.body?.cancel();
    const kept = await listWith(alice, otherId);
    expect(kept.status).toBe(200);
    await kept.body?.cancel();
  });
});

describe('browser requests', () => {
  it('a JSON route refuses a CORS-simple content type (text/plain; x=json) with 415', async () => {
    const res = await fetch(`${base}/api/v1/approvals/anything/deny`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'text/plain; x=json' },
      body: '{}',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({ code: 'malformedRequest' });
  });

  async function signIn(proof: Record<string, string>) {
    const res = await fetch(`${base}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(proof),
    });
    const body = (await res.json()) as { session?: string; sessionHeader?: string };
    // Whatever cookie the browser would keep and send to every port of this host.
    const cookie = res.headers.get('set-cookie')?.split(';')[0] ?? `airlock_owner=${body.session}`;
    return { res, body, cookie, session: { [body.sessionHeader ?? 'x']: body.session ?? '' } };
  }

  it('a sign-in link works once; its answer carries the session secret and sets no cookie', async () => {
    const code = await tk.kernel.principals.issueLoginCode();
    const first = await signIn({ code });
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('set-cookie')).toBeNull();
    expect(first.body).toMatchObject({ sessionHeader: 'x-airlock-session' });
    expect(first.body.session).toMatch(/^os_/);
    const again = await signIn({ code });
    expect(again.res.status).toBe(403);
    expect(await tk.kernel.principals.signIn({ token: alice })).toMatchObject({
      code: 'notAuthorized',
    });
  });

  it('no answer hands a session secret to a request without a code or the owner token', async () => {
    const { session } = await signIn({ token: tokenOf(owner) });
    const secret = Object.values(session)[0]!;
    // Whatever a browser sends on its own (a cookie named like the old session cookie included).
    for (const headers of [
      {} as Record<string, string>,
      { cookie: `airlock_owner=${secret}` },
      { cookie: `airlock_owner=${secret}`, origin: base },
    ]) {
      const res = await fetch(`${base}/api/v1/session`, { headers });
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ owner: false });
      expect(text).not.toContain(secret);
    }
    // The session's own header: only a yes, still no secret.
    const own = await fetch(`${base}/api/v1/session`, { headers: session });
    expect(await own.text()).toBe('{"owner":true}');
  });

  it('a cookie alone grants nothing: owner routes, reads and the event stream refuse it', async () => {
    const { cookie } = await signIn({ token: tokenOf(owner) });
    for (const path of ['approvals', 'grants', 'audit', 'events'])
      expect((await fetch(`${base}/api/v1/${path}`, { headers: { cookie } })).status).toBe(401);
    const crumb = tokenOf(await agentHeaders(tk.kernel, 'crumb'));
    const client = await connectClient(`${base}/mcp`, { token: crumb, pin: MODERN_PROTOCOL });
    const asked = await askWrite(client);
    const approve = await fetch(`${base}/api/v1/approvals/${String(asked.approvalID)}/approve`, {
      method: 'POST',
      headers: { cookie, origin: base, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(approve.status).toBe(401);
    expect((await pendingFor('crumb')).map((a) => a.id)).toContain(asked.approvalID);
    await client.close();
  });

  it('an owner session header changes things only from the exact origin', async () => {
    const { session } = await signIn({ token: tokenOf(owner) });
    const client = await connectClient(`${base}/mcp`, { token: bob, pin: MODERN_PROTOCOL });
    const [pending] = await pendingFor('bob');
    expect(pending).toBeDefined();
    const deny = (headers: Record<string, string>) =>
      fetch(`${base}/api/v1/approvals/${pending!.id}/deny`, {
        method: 'POST',
        headers: { ...session, 'content-type': 'application/json', ...headers },
        body: '{}',
      });
    // Reading needs the header (no origin needed).
    expect((await fetch(`${base}/api/v1/approvals`, { headers: session })).status).toBe(200);
    expect((await deny({ origin: 'http://localhost:5173' })).status).toBe(403); // another port
    expect((await deny({})).status).toBe(403); // no origin at all
    expect((await pendingFor('bob')).map((a) => a.id)).toContain(pending!.id);
    expect((await deny({ origin: base })).status).toBe(200);
    // A session that ended is refused outright (401), never taken as anonymous.
    await fetch(`${base}/api/v1/session`, {
      method: 'DELETE',
      headers: { ...session, origin: base },
    });
    expect((await fetch(`${base}/api/v1/approvals`, { headers: session })).status).toBe(401);
    await client.close();
  });
});
