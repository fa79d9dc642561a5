/**
 * The CLI on a server's data folder uses that server's store (authority.md
 * §1): `airlock serve --store postgres://…` records the store in its
 * `--data` folder, and `airlock agents|owner|approvals|policy --data DIR`
 * without `--store` open it there, instead of a SQLite store of their own
 * whose tokens the server would refuse.
 */
import { afterAll, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/cli.js';
import { startServe, type Served } from '../helpers/servers.js';
import { connectClient, MODERN_PROTOCOL } from '../helpers/mcp-client.js';
import { toolJson } from '../helpers/results.js';
import { dropSchema, PG_URL, uniqueSchema } from '../services/postgres.js';
import { describeWithServices } from '../services/index.js';

const dirs: string[] = [];
const served: Served[] = [];
const schema = uniqueSchema('serverfolder');
afterAll(async () => {
  for (const s of served) s.child.kill('SIGTERM');
  await Promise.all(served.map((s) => s.exited));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await dropSchema(schema).catch(() => undefined);
});

await describeWithServices('the CLI on a PostgreSQL server’s data folder', ['postgres'], () => {
  it('agents add --data DIR without --store makes the agent in the server’s store', async () => {
    const data = mkdtempSync(join(tmpdir(), 'airlock-folder-'));
    dirs.push(data);
    const server = await startServe([
      '--doors',
      'ledger',
      '--data',
      data,
      '--store',
      `${PG_URL}?schema=${schema}`,
    ]);
    served.push(server);

    const added = await run(['agents', 'add', 'carol', '--data', data]);
    expect(added.code, added.stderr).toBe(0);
    const token = added.stdout.trim();
    expect(token).toMatch(/^ak_/);
    // No SQLite store of its own appeared in the folder.
    expect(existsSync(join(data, 'airlock.db'))).toBe(false);

    // The server knows carol: her token works there.
    const client = await connectClient(`${server.url}/mcp`, { token, pin: MODERN_PROTOCOL });
    expect(
      toolJson(await client.callTool({ name: 'ledger_echo', arguments: { text: 'hi' } })),
    ).toEqual({ text: 'hi' });
    await client.close();

    const listed = await run(['agents', 'list', '--json', '--data', data]);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((a) => a.name).sort()).toEqual([
      'carol',
      'default',
    ]);
  }, 60_000);
});
