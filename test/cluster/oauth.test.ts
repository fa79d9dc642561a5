/**
 * Remote agents through nginx in front of three instances, round-robin, no
 * stickiness (issue 29, spec/authority.md §7; the instances share
 * PostgreSQL and Redis and one `--public-url`): every step of the OAuth
 * flow — discovery, the authorization request, the owner's consent, the
 * browser's return, the code exchange, the MCP calls, a refresh — may land
 * on another instance, and the flow still completes; the owner's revoke on
 * one instance ends the client everywhere.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { describeWithServices } from '../services/index.js';
import {
  cimdHost,
  connectFromNothing,
  connectWithOAuth,
  MemoryProvider,
  type CimdHost,
} from '../helpers/oauth-client.js';
import { NGINX, REDIS_SERVER, startCluster, type Cluster } from './cluster.js';

const missing = [NGINX, REDIS_SERVER].filter((bin) => !existsSync(bin));
if (missing.length > 0 && process.env.AIRLOCK_TEST_SKIP_SERVICES !== '1')
  throw new Error(
    `The cluster suite needs ${missing.join(' and ')}: apt-get install -y nginx redis-server`,
  );

let cluster: Cluster;
let cimd: CimdHost;
afterAll(async () => {
  await cimd?.close();
  await cluster?.close();
});

await describeWithServices('OAuth through nginx, three instances', ['postgres'], () => {
  beforeAll(async () => {
    [cluster, cimd] = await Promise.all([
      startCluster({ publicUrl: true }),
      cimdHost('Round Robin'),
    ]);
  }, 90_000);

  it('the whole flow completes across instances; a revoke on one ends it on all', async () => {
    const base = cluster.url.replace('127.0.0.1', 'localhost');
    const provider = new MemoryProvider(cimd);
    const client = await connectFromNothing(
      `${base}/mcp/ledger`,
      base,
      cluster.ownerToken,
      provider,
      {
        decision: 'approve',
        agent: 'round-robin',
      },
    );
    // Several calls: round-robin sends them to every instance.
    for (let i = 0; i < 6; i++) {
      const echoed = await client.callTool({ name: 'ledger_echo', arguments: { text: `n${i}` } });
      expect(echoed.isError).toBeFalsy();
    }
    await client.close();

    const revoked = await fetch(`${cluster.instanceUrl(1)}/api/v1/agents/round-robin`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${cluster.ownerToken}` },
    });
    expect(revoked.status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${cluster.instanceUrl(i)}/mcp/ledger`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${provider.saved!.access_token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status, `instance ${i}`).toBe(401);
    }
    await expect(connectWithOAuth(`${base}/mcp/ledger`, provider)).rejects.toThrow();
  });
});
