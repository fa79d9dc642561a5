/**
 * Remote agents in scale-out (issue 29, spec/authority.md §7): three
 * `airlock serve` instances on one PostgreSQL store and Redis bus, one
 * public address (`--public-url`, what a load balancer would give them).
 * A client is authorized on A, its token works on B, the owner revokes its
 * agent on C, and B refuses it at once; its refresh token fails on any.
 */
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startServe, type Served } from '../helpers/servers.js';
import {
  cimdHost,
  connectFromNothing,
  MemoryProvider,
  type CimdHost,
} from '../helpers/oauth-client.js';
import { connectClient } from '../helpers/mcp-client.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';

const dirs: string[] = [];
const served: Served[] = [];
const schema = uniqueSchema('oauth_scale');
let cimd: CimdHost | undefined;
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await cimd?.close();
  await dropSchema(schema).catch(() => undefined);
});

await describeWithServices('OAuth clients across instances', ['postgres', 'redis'], () => {
  it('authorized on A, called on B, revoked on C: B refuses it at once', async () => {
    const port = await freePort();
    const publicUrl = `http://localhost:${port}`;
    const start = async (own?: number) => {
      const d = mkdtempSync(join(tmpdir(), 'airlock-oauth-scale-'));
      dirs.push(d);
      const s = await startServe([
        ...(own ? ['--port', String(own)] : []),
        '--doors',
        'ledger',
        '--data',
        d,
        '--store',
        `${PG_URL}?schema=${schema}`,
        '--bus',
        REDIS_URL,
        '--public-url',
        publicUrl,
      ]);
      served.push(s);
      return s;
    };
    // `startServe` passes --port 0 first; a later --port wins.
    const a = await start(port);
    const [b, c] = [await start(), await start()];
    const owner = a.ownerToken!;
    cimd = await cimdHost('Scaled Client');
    const provider = new MemoryProvider(cimd);
    const onA = await connectFromNothing(`${publicUrl}/mcp/ledger`, publicUrl, owner, provider, {
      decision: 'approve',
      agent: 'scaled',
    });
    await onA.close();
    const token = provider.saved!.access_token;

    const onB = await connectClient(`${b.url}/mcp/ledger`, { token });
    const echoed = await onB.callTool({ name: 'ledger_echo', arguments: { text: 'from B' } });
    expect(echoed.isError).toBeFalsy();

    const revoked = await fetch(`${c.url}/api/v1/agents/scaled`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${owner}` },
    });
    expect(revoked.status).toBe(200);
    const after = await fetch(`${b.url}/mcp/ledger`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(after.status).toBe(401);
    expect(await after.text()).toMatch(/revoked by the owner/);
    await onB.close().catch(() => undefined);
  });
});
