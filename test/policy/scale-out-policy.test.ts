/**
 * A policy ask across instances (authority.md §2–§3): a 2026-era client on
 * instance A gets `input_required`, the owner approves on instance B
 * (shared PostgreSQL store and Redis bus), and the client's retry on A runs
 * the call exactly once — counted on the upstream API.
 */
import { afterAll, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startServe, type Served } from '../helpers/servers.js';
import { MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { countingServer, type CountingServer } from '../doors/openapi/helpers.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { REDIS_URL } from '../services/redis.js';
import { describeWithServices } from '../services/index.js';

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Tracker', version: '1' },
  paths: {
    '/items/{item_id}/': {
      parameters: [{ name: 'item_id', in: 'path', required: true, schema: { type: 'string' } }],
      delete: { summary: 'Delete an item', responses: { '204': { description: 'gone' } } },
    },
  },
};

const dirs: string[] = [];
const served: Served[] = [];
let upstream: CountingServer | undefined;
const schema = uniqueSchema('policyscale');
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await upstream?.close();
  await dropSchema(schema).catch(() => undefined);
});

await describeWithServices(
  'policy asks across instances on PostgreSQL and Redis',
  ['postgres', 'redis'],
  () => {
    it('input_required on A, approved on B, resumed on A: the call runs exactly once', async () => {
      upstream = await countingServer((_req, res) => res.writeHead(204).end());
      const specDir = mkdtempSync(join(tmpdir(), 'airlock-policy-scale-'));
      dirs.push(specDir);
      const spec = join(specDir, 'tracker.json');
      writeFileSync(spec, JSON.stringify(DOC));
      const start = async () => {
        const d = mkdtempSync(join(tmpdir(), 'airlock-policy-scale-'));
        dirs.push(d);
        const s = await startServe([
          '--doors',
          'openapi',
          '--openapi',
          spec,
          '--base-url',
          upstream!.url,
          '--prefix',
          'plane',
          '--data',
          d,
          '--store',
          `${PG_URL}?schema=${schema}`,
          '--bus',
          REDIS_URL,
        ]);
        served.push(s);
        return s;
      };
      const a = await start();
      const b = await start();
      const owner = { authorization: `Bearer ${a.ownerToken!}` };

      // A client that shows links; the owner, reading it, approves on instance B.
      const client = new Client(
        { name: 'link-shower', version: '1' },
        {
          capabilities: { elicitation: { url: {} } },
          versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
        },
      );
      const shown: string[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        const params = request.params as { mode?: string; url?: string };
        shown.push(params.url!);
        const id = decodeURIComponent(params.url!.split('/').pop()!);
        const approved = await fetch(`${b.url}/api/v1/approvals/${id}/approve`, {
          method: 'POST',
          headers: { ...owner, 'content-type': 'application/json' },
          body: JSON.stringify({ scope: 'once' }),
        });
        expect(approved.status).toBe(200);
        return { action: 'accept' } as never;
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${a.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${a.agentToken!}` } },
        }),
      );
      const args = { resource: 'items', method: 'delete', args: { item_id: 'x1' }, confirm: true };
      const result = (await client.callTool({ name: 'plane_call', arguments: args })) as {
        isError?: boolean;
      };
      expect(shown).toHaveLength(1);
      expect(shown[0]).toMatch(/\/#\/approvals\/[0-9a-f-]{36}$/);
      expect(result.isError).toBeFalsy();
      expect(upstream.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['DELETE /items/x1/']);

      // The approval was for one call: a plain client on B asking again is asked again.
      const plain = new Client(
        { name: 'plain', version: '1' },
        {
          versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
        },
      );
      await plain.connect(
        new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${a.agentToken!}` } },
        }),
      );
      const again = toolJson(await plain.callTool({ name: 'plane_call', arguments: args }));
      expect(again).toMatchObject({ code: 'approvalRequired' });
      expect(upstream.requests).toHaveLength(1);

      // A rule the owner adds on B applies on A at once: A hears policyChanged on the bus.
      const ac = new AbortController();
      const stream = await fetch(`${a.url}/api/v1/events`, { signal: ac.signal, headers: owner });
      const reader = stream.body!.getReader();
      const added = await fetch(`${b.url}/api/v1/policy/rules`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ door: 'plane', decision: 'deny', reason: 'frozen by the owner' }),
      });
      expect(added.status).toBe(201);
      let seen = '';
      while (!seen.includes('policyChanged')) {
        const chunk = await reader.read();
        if (chunk.done) break;
        seen += new TextDecoder().decode(chunk.value);
      }
      ac.abort();
      expect(seen).toContain('policyChanged');
      const denied = toolJson(await client.callTool({ name: 'plane_call', arguments: args }));
      expect(denied).toMatchObject({ code: 'notAuthorized' });
      expect(String(denied.message)).toContain('frozen by the owner');
      expect(upstream.requests).toHaveLength(1);
      await client.close();
      await plain.close();
    }, 90_000);
  },
);
