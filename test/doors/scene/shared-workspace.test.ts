/**
 * Issue 36 item 4: the workspace's open project is shared. Two real
 * `airlock stdio` processes (driven by MCP SDK clients) and `airlock serve`
 * on one data folder, on SQLite and on PostgreSQL: a project opened in one
 * is the one the others write to and the web UI's REST and events show;
 * undo/redo is one history; concurrent writes from two processes are each
 * applied once with one epoch counter; a SIGKILL keeps every acknowledged
 * write.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, testEnv } from '../../helpers/cli.js';
import { startServe, type Served } from '../../helpers/servers.js';
import { structuredOf } from '../../helpers/results.js';
import { waitFor } from '../../helpers/wait.js';
import { dropSchema, PG_URL, probe, uniqueSchema } from '../../services/postgres.js';
import { pageOf, tempDir } from './helpers.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const dirs: string[] = [];
const servers: Served[] = [];
const clients: Client[] = [];
const schemas: string[] = [];
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const s of servers) s.child.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const s of schemas) await dropSchema(s).catch(() => undefined);
});

const pgProblem = await probe();

interface Workspace {
  data: string;
  store: string[];
  config: string;
}

function workspace(pg: boolean): Workspace {
  const data = tempDir();
  dirs.push(data);
  const config = join(data, 'config.json');
  // The owner lets agents undo and redo unasked.
  const rules = ['koharu.undo', 'koharu.redo'].map((tool) => ({ tool, decision: 'allow' }));
  writeFileSync(config, JSON.stringify({ policy: { rules } }));
  let store: string[] = [];
  if (pg) {
    const schema = uniqueSchema('scene_ws');
    schemas.push(schema);
    store = ['--store', `${PG_URL}?schema=${schema}`];
  }
  return { data, store, config };
}

async function stdio(ws: Workspace, name: string) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'stdio', '--doors', 'scene', '--data', ws.data, '--config', ws.config, ...ws.store],
    env: testEnv() as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1' });
  await client.connect(transport);
  clients.push(client);
  const call = async (tool: string, args: Json = {}) => {
    const r = await client.callTool({ name: tool, arguments: args });
    if (r.isError) throw new Error(`${tool}: ${JSON.stringify(r.content)}`);
    return structuredOf(r) as Json;
  };
  return { client, call, pid: () => transport.pid! };
}

async function serve(ws: Workspace) {
  const served = await startServe([
    '--doors',
    'scene',
    '--data',
    ws.data,
    '--config',
    ws.config,
    ...ws.store,
  ]);
  servers.push(served);
  const owner = { authorization: `Bearer ${served.ownerToken!}` };
  const scene = async () =>
    (await (await fetch(`${served.url}/api/v1/scene.json`, { headers: owner })).json()) as Json;
  const events: Json[] = [];
  const abort = new AbortController();
  const res = await fetch(`${served.url}/api/v1/events`, { headers: owner, signal: abort.signal });
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const data = buf
          .slice(0, i)
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n');
        buf = buf.slice(i + 2);
        if (data) events.push(JSON.parse(data) as Json);
      }
    }
  })().catch(() => undefined);
  await waitFor(() => events.some((e) => e.event === 'snapshot'), { message: 'the snapshot' });
  return { served, scene, events, stop: () => abort.abort() };
}

const addPage = (name: string) => ({ op: { AddPage: { page: pageOf([], undefined, name) } } });
const pageNames = (view: Json) => (view.scene.pages as { name: string }[]).map((p) => p.name);
const wait = { timeoutMs: 20_000 };

function suite(pg: boolean) {
  it('a project opened in one stdio process is the one a second process writes to and the web UI shows; opening another is seen everywhere', async () => {
    const ws = workspace(pg);
    const a = await stdio(ws, 'agent-a');
    const b = await stdio(ws, 'agent-b');
    const web = await serve(ws);
    expect(
      await a.call('koharu.open_project', { path: 'one.khrproj', createName: 'One' }),
    ).toMatchObject({ name: 'One' });
    // B never opened anything: it writes to the workspace's open project.
    expect(await b.call('koharu.apply', addPage('from-b'))).toEqual({ epoch: 1 });
    expect(await a.call('koharu.apply', addPage('from-a'))).toEqual({ epoch: 2 });
    const viewA = await a.call('koharu.get_scene');
    expect(viewA.epoch).toBe(2);
    expect(pageNames(viewA)).toEqual(['from-b', 'from-a']);
    const ui = await web.scene();
    expect(ui.scene.project.name).toBe('One');
    expect(ui.epoch).toBe(2);
    // The web UI hears the stdio processes' changes.
    await waitFor(() => web.events.some((e) => e.event === 'sceneChanged' && e.epoch === 2), {
      ...wait,
      message: 'sceneChanged epoch 2 on the server',
    });

    const before = web.events.length;
    await b.call('koharu.open_project', { path: 'two.khrproj', createName: 'Two' });
    await waitFor(
      () =>
        web.events.slice(before).some((e) => e.event === 'sceneChanged' && e.label === 'open Two'),
      { ...wait, message: 'the open of Two on the server' },
    );
    expect((await web.scene()).scene.project.name).toBe('Two');
    const again = await a.call('koharu.get_scene');
    expect(again.scene.project.name).toBe('Two');
    expect(again.epoch).toBe(0);

    // Closed in the server's REST: no process has a project open.
    const closed = await fetch(`${web.served.url}/api/v1/projects/current`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${web.served.ownerToken!}` },
    });
    expect(closed.status).toBeLessThan(300);
    await expect(
      a.client.callTool({ name: 'koharu.apply', arguments: addPage('x') }),
    ).rejects.toThrow(/no project open/);
    web.stop();
  });

  it('undo and redo are one history: a step made in one process is undone in the other', async () => {
    const ws = workspace(pg);
    const a = await stdio(ws, 'undo-a');
    const b = await stdio(ws, 'undo-b');
    await a.call('koharu.open_project', { path: 'u.khrproj', createName: 'U' });
    await a.call('koharu.apply', addPage('p1'));
    await a.call('koharu.apply', addPage('p2'));
    expect(await b.call('koharu.undo')).toEqual({ epoch: 3 });
    expect(pageNames(await a.call('koharu.get_scene'))).toEqual(['p1']);
    expect(await a.call('koharu.redo')).toEqual({ epoch: 4 });
    expect(pageNames(await b.call('koharu.get_scene'))).toEqual(['p1', 'p2']);
  });

  it('concurrent writes from two processes are each applied once, with one epoch counter', async () => {
    const ws = workspace(pg);
    const a = await stdio(ws, 'many-a');
    const b = await stdio(ws, 'many-b');
    await a.call('koharu.open_project', { path: 'm.khrproj', createName: 'M' });
    const n = 15;
    const writes = [
      ...Array.from({ length: n }, (_, i) => a.call('koharu.apply', addPage(`a${i}`))),
      ...Array.from({ length: n }, (_, i) => b.call('koharu.apply', addPage(`b${i}`))),
    ];
    const epochs = (await Promise.all(writes)).map((r) => r.epoch as number);
    expect([...epochs].sort((x, y) => x - y)).toEqual(
      Array.from({ length: 2 * n }, (_, i) => i + 1),
    );
    const view = await b.call('koharu.get_scene');
    expect(view.epoch).toBe(2 * n);
    expect(pageNames(view).sort()).toEqual(
      [
        ...Array.from({ length: n }, (_, i) => `a${i}`),
        ...Array.from({ length: n }, (_, i) => `b${i}`),
      ].sort(),
    );
  });

  it('a process that stops leaves the project open: the others go on, and a restarted server comes back with it', async () => {
    const ws = workspace(pg);
    const a = await stdio(ws, 'stop-a');
    const b = await stdio(ws, 'stop-b');
    const first = await serve(ws);
    await a.call('koharu.open_project', { path: 's.khrproj', createName: 'S' });
    await a.call('koharu.apply', addPage('before'));
    await a.client.close();
    expect(await b.call('koharu.apply', addPage('after'))).toEqual({ epoch: 2 });
    first.stop();
    first.served.child.kill('SIGTERM');
    await first.served.exited;
    const again = await serve(ws);
    const ui = await again.scene();
    expect(ui.scene.project.name).toBe('S');
    expect(ui.epoch).toBe(2);
    again.stop();
  });

  it('a SIGKILL of a process with writes in flight keeps every acknowledged write', async () => {
    const ws = workspace(pg);
    const a = await stdio(ws, 'kill-a');
    const b = await stdio(ws, 'kill-b');
    await a.call('koharu.open_project', { path: 'k.khrproj', createName: 'K' });
    const acknowledged: string[] = [];
    const inFlight = Array.from({ length: 40 }, (_, i) =>
      b
        .call('koharu.apply', addPage(`k${i}`))
        .then(() => acknowledged.push(`k${i}`))
        .catch(() => undefined),
    );
    // Writes from the survivor go on meanwhile.
    const mine = Array.from({ length: 5 }, (_, i) => a.call('koharu.apply', addPage(`s${i}`)));
    await waitFor(() => acknowledged.length >= 5, { ...wait, message: 'five acknowledged writes' });
    process.kill(b.pid(), 'SIGKILL');
    await Promise.all(inFlight);
    await Promise.all(mine);
    const view = await a.call('koharu.get_scene');
    const names = pageNames(view);
    for (const name of [...acknowledged, 's0', 's1', 's2', 's3', 's4'])
      expect(names).toContain(name);
    // Each page once, and the epoch counts them.
    expect(new Set(names).size).toBe(names.length);
    expect(view.epoch).toBe(names.length);
    // The survivor keeps writing after the kill (the lock died with its holder).
    expect(await a.call('koharu.apply', addPage('after'))).toEqual({ epoch: names.length + 1 });
  });
}

describe('the workspace open project is shared (SQLite)', () => suite(false));

if (pgProblem === null)
  describe('the workspace open project is shared (PostgreSQL)', () => suite(true));
else
  describe('the workspace open project is shared (PostgreSQL)', () => {
    it('PostgreSQL is reachable', () => {
      throw new Error(pgProblem);
    });
  });
