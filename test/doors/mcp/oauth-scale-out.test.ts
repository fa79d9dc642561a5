/**
 * An OAuth upstream in scale-out (spec/gateway.md §1 "OAuth upstreams"):
 * instances share one PostgreSQL store (each its own data folder, the same
 * `upstream-oauth.key` in each): the owner connects on A, agents' calls
 * work on B (which notices the connect by itself), the grant is revoked at
 * the authorization server and a call on B marks it; A shows reconnect.
 */
import { afterAll, expect, it } from 'vitest';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/store/open.js';
import { KEY_FILE } from '../../../src/doors/mcp/oauth/seal.js';
import {
  callTool,
  errorOf,
  gatewayWorkspace,
  type GatewayWorkspace,
  type Json,
} from './helpers.js';
import { oauthUpstream, type OAuthUpstream } from './oauth-fixtures.js';
import { connect } from './oauth-helpers.js';
import { waitFor } from '../../helpers/wait.js';
import { describeWithPostgres, dropSchema, PG_URL, uniqueSchema } from '../../services/postgres.js';

const schema = uniqueSchema('mcp_oauth');
const dirs: string[] = [];
const open: GatewayWorkspace[] = [];
let up: OAuthUpstream | undefined;

afterAll(async () => {
  for (const ws of open) await ws.close().catch(() => undefined);
  await up?.close();
  await dropSchema(schema).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An instance: its own data folder, noted to use the shared PostgreSQL store. */
async function instance(url: string, owner?: Record<string, string>): Promise<GatewayWorkspace> {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-oauth-pg-'));
  dirs.push(dir);
  const { store } = await openStore({ data: dir, store: `${PG_URL}?schema=${schema}` });
  await store.close();
  const ws = await gatewayWorkspace(
    { gh: { url, oauth: {} } },
    { dataDir: dir, ...(owner ? { owner } : {}) },
  );
  open.push(ws);
  return ws;
}

const dataOf = (ws: GatewayWorkspace) => ws.tk.dir;

await describeWithPostgres('an OAuth upstream across instances sharing PostgreSQL', () => {
  it('connected on A, called on B; revoked, B refuses naming it and A shows reconnect', async () => {
    up = await oauthUpstream();
    const a = await instance(up.url);
    const b = await instance(up.url, a.owner);
    await connect(a);
    // The one deployment-wide key: the same file in every instance's data folder.
    copyFileSync(join(dataOf(a), KEY_FILE), join(dataOf(b), KEY_FILE));
    chmodSync(join(dataOf(b), KEY_FILE), 0o600);
    await waitFor(() => b.gateway.views()[0]!.state === 'running', {
      timeoutMs: 15_000,
      message: 'B noticing the connect',
    });
    const agent = await b.agent('alice');
    expect((await callTool(agent, 'gh_whoami', { name: 'b' })).content[0]!.text).toBe('hello b');
    expect(up.registrations).toBe(1);

    await up.revokeAll();
    const refused = await callTool(agent, 'gh_whoami', { name: 'c' });
    expect(errorOf(refused).code).toBe('unavailable');
    expect(errorOf(refused).message).toContain("'gh'");
    const seenOnA = (await a.rest('GET', 'upstreams')).body.upstreams[0] as Json;
    expect(seenOnA.authorization).toMatchObject({ status: 'reconnect' });
  });
});
