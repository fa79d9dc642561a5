/** The scene door in the real `airlock serve` process (dist/): SIGKILL safety and a project two servers share. */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServe, type Served } from '../../helpers/servers.js';
import { connectClient } from '../../helpers/mcp-client.js';
import { structuredOf } from '../../helpers/results.js';
import { pageOf, tempDir } from './helpers.js';

const dirs: string[] = [];
const servers: Served[] = [];
afterAll(() => {
  for (const s of servers) s.child.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(data: string, config?: string) {
  const served = await startServe([
    '--doors',
    'scene',
    '--data',
    data,
    ...(config ? ['--config', config] : []),
  ]);
  servers.push(served);
  // Each server made its own data folder's agent 'default' and printed its token.
  const client = await connectClient(new URL('/mcp', served.url), {
    name: 'scene-cli-test',
    version: '1',
    token: served.agentToken!,
  });
  return { served, client };
}

describe('scene door in airlock serve', () => {
  it('after SIGKILL following N acknowledged ops, reopening yields exactly those N ops and that epoch', async () => {
    const data = tempDir();
    dirs.push(data);
    // The owner lets the agent undo and redo unasked (undoing an added page removes it).
    const config = join(data, 'config.json');
    const rules = ['koharu.undo', 'koharu.redo'].map((tool) => ({ tool, decision: 'allow' }));
    writeFileSync(config, JSON.stringify({ policy: { rules } }));
    const first = await serve(data, config);
    await first.client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'crash.khrproj', createName: 'Crash' },
    });
    const names: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await first.client.callTool({
        name: 'koharu.apply',
        arguments: { op: { AddPage: { page: pageOf([], undefined, `p${i}`) } } },
      });
      expect(structuredOf(r)).toEqual({ epoch: i + 1 });
      names.push(`p${i}`);
    }
    expect(
      structuredOf(await first.client.callTool({ name: 'koharu.undo', arguments: {} })),
    ).toEqual({
      epoch: 8,
    });
    first.served.child.kill('SIGKILL');
    await first.served.exited;
    expect(existsSync(join(data, 'projects', 'crash.khrproj', 'oplog.jsonl'))).toBe(true);

    const second = await serve(data, config);
    await second.client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'crash.khrproj' },
    });
    const view = structuredOf(
      await second.client.callTool({ name: 'koharu.get_scene', arguments: {} }),
    ) as {
      epoch: number;
      scene: { pages: { name: string }[] };
    };
    expect(view.epoch).toBe(8);
    expect(view.scene.pages.map((p) => p.name)).toEqual(names.slice(0, 6));
    expect(
      structuredOf(await second.client.callTool({ name: 'koharu.redo', arguments: {} })),
    ).toEqual({
      epoch: 9,
    });
    second.served.child.kill('SIGKILL');
    await second.served.exited;
  });

  it('two servers on other data folders sharing a project root edit one history of the same project', async () => {
    const shared = tempDir();
    const config = join(shared, 'config.json');
    writeFileSync(config, JSON.stringify({ scene: { projectRoots: [join(shared, 'projects')] } }));
    const dataA = tempDir();
    const dataB = tempDir();
    dirs.push(shared, dataA, dataB);
    const a = await serve(dataA, config);
    const b = await serve(dataB, config);
    const opened = await a.client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'shared.khrproj', createName: 'Shared' },
    });
    expect(structuredOf(opened)).toMatchObject({ name: 'Shared' });
    const add = (c: typeof a.client, name: string) =>
      c.callTool({
        name: 'koharu.apply',
        arguments: { op: { AddPage: { page: pageOf([], undefined, name) } } },
      });
    expect(structuredOf(await add(a.client, 'from-a'))).toEqual({ epoch: 1 });
    const also = await b.client.callTool({
      name: 'koharu.open_project',
      arguments: { path: 'shared.khrproj' },
    });
    expect(structuredOf(also)).toMatchObject({ name: 'Shared' });
    expect(structuredOf(await add(b.client, 'from-b'))).toEqual({ epoch: 2 });
    expect(structuredOf(await add(a.client, 'again-a'))).toEqual({ epoch: 3 });
    const view = structuredOf(
      await b.client.callTool({ name: 'koharu.get_scene', arguments: {} }),
    ) as { epoch: number; scene: { pages: { name: string }[] } };
    expect(view.epoch).toBe(3);
    expect(view.scene.pages.map((p) => p.name)).toEqual(['from-a', 'from-b', 'again-a']);
  });
});
