import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';

const dirs: string[] = [];
const served: Served[] = [];
const schema = uniqueSchema('scaleout');
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchema(schema).catch(() => undefined);
});

await describeWithServices(
  'scale-out: two instances on PostgreSQL and Redis',
  ['postgres', 'redis'],
  () => {
    {
      it('share grants, journaled writes and events', async () => {
        const store = `${PG_URL}?schema=${schema}`;
        const start = async () => {
          const d = mkdtempSync(join(tmpdir(), 'airlock-scale-'));
          dirs.push(d);
          const s = await startServe([
            '--doors',
            'ledger',
            '--data',
            d,
            '--store',
            store,
            '--bus',
            REDIS_URL,
          ]);
          served.push(s);
          return s;
        };
        const [a, b] = [await start(), await start()];
        // The first instance made the owner and the agent 'default'; the store keeps
        // their hashes, so both tokens work on every instance of this store.
        const agentToken = a.agentToken!;
        const owner = { authorization: `Bearer ${a.ownerToken!}` };
        const client = (url: string) =>
          connectClient(new URL('/mcp', url), {
            name: 'scale',
            version: '1',
            pin: MODERN_PROTOCOL,
            token: agentToken,
          });
        const ca = await client(a.url);
        const cb = await client(b.url);
        // Listen for events on B while A gets the approval request.
        const ac = new AbortController();
        const events = await fetch(`${b.url}/api/v1/events`, {
          signal: ac.signal,
          headers: owner,
        });
        const reader = events.body!.getReader();
        const asked = toolJson(
          await ca.callTool({ name: 'ledger_request_write_access', arguments: {} }),
        );
        expect(asked.code).toBe('approvalRequired');
        let seen = '';
        const deadline = Date.now() + 5000;
        while (!seen.includes('approvalRequested') && Date.now() < deadline)
          seen += new TextDecoder().decode((await reader.read()).value);
        expect(seen).toContain('approvalRequested');
        ac.abort();
        // Approve on B; the grant (same principal) works on A and B.
        expect(
          (
            await fetch(`${b.url}/api/v1/approvals/${String(asked.approvalID)}/approve`, {
              method: 'POST',
              headers: owner,
            })
          ).status,
        ).toBe(200);
        const op = { operationID: randomUUID(), account: 'shared', amount: 1, expectedVersion: 0 };
        const receipt = toolJson(await ca.callTool({ name: 'ledger_append', arguments: op }));
        expect(receipt).toMatchObject({ committedVersion: 1 });
        // The retry through the other instance returns the same receipt and writes nothing.
        expect(toolJson(await cb.callTool({ name: 'ledger_append', arguments: op }))).toEqual(
          receipt,
        );
        expect(
          toolJson(await cb.callTool({ name: 'ledger_read', arguments: { account: 'shared' } })),
        ).toMatchObject({ version: 1 });
        await ca.close();
        await cb.close();
      }, 60_000);
    }
  },
);
