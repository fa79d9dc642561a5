/** The event bus in scale-out (issue 15 P4–P6): one channel per deployment, outages, unreachable Redis. */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { openWorkspace, type Workspace } from '../../src/cli/workspace/workspace.js';
import { createEventBus, type BusTransport } from '../../src/kernel/events/events.js';
import { silentLogger } from '../../src/kernel/logger.js';
import { run, testEnv } from '../helpers/cli.js';
import { freePort } from '../helpers/servers.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { describeWithRedis, REDIS_URL } from '../services/redis.js';

const dirs: string[] = [];
const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const w of workspaces.splice(0)) await w.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'airlock-bus-'));
  dirs.push(d);
  return d;
};

await describeWithRedis('deployments on one Redis', () => {
  it('two deployments (two stores) on the same Redis never hear each other; one store shares its events', async () => {
    const open = async (data: string) => {
      const w = await openWorkspace({ data, doors: [], bus: REDIS_URL, logger: silentLogger });
      workspaces.push(w);
      return w;
    };
    const shared = tempDir();
    const [a, a2, b] = [await open(shared), await open(shared), await open(tempDir())];
    const seen = { a2: [] as unknown[], b: [] as unknown[] };
    a2.kernel.events.subscribe((e) => seen.a2.push(e.data));
    b.kernel.events.subscribe((e) => seen.b.push(e.data));
    a.kernel.events.publish({ event: 'policyChanged', marker: 'from-a' });
    b.kernel.events.publish({ event: 'policyChanged', marker: 'from-b' });
    await waitFor(() => seen.a2.length >= 1 && seen.b.length >= 1, {
      timeoutMs: 3000,
      message: 'each event on its own deployment',
    });
    // Nothing more happens: neither event crosses to the other deployment.
    await holdsFor(() => seen.a2.length === 1 && seen.b.length === 1, 200, {
      message: 'each deployment seeing only its own event',
    });
    expect(seen.a2).toEqual([{ event: 'policyChanged', marker: 'from-a' }]);
    expect(seen.b).toEqual([{ event: 'policyChanged', marker: 'from-b' }]);
  });
});

describe('bus outages', () => {
  it("while the bus cannot send, the instance's own listeners still get every event", async () => {
    const failing: BusTransport = {
      start: async () => undefined,
      send: async () => {
        throw new Error('Redis is down');
      },
      close: async () => undefined,
    };
    const errors: unknown[] = [];
    const bus = await createEventBus({ transport: failing, onError: (e) => errors.push(e) });
    const seen: unknown[] = [];
    bus.subscribe((e) => seen.push(e.data));
    bus.publish({ event: 'jobFinished', id: 'j1' });
    await waitFor(() => seen.length === 1, { timeoutMs: 2000, message: 'local delivery' });
    expect(seen).toEqual([{ event: 'jobFinished', id: 'j1' }]);
    expect(errors).toHaveLength(1);
    await bus.close();
  });

  it('serve with an unreachable --bus exits 1 at once with one line naming it', async () => {
    const port = await freePort();
    const r = await run(
      [
        'serve',
        '--port',
        '0',
        '--relay-port',
        '0',
        '--data',
        tempDir(),
        '--bus',
        `redis://127.0.0.1:${port}`,
      ],
      testEnv(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`cannot reach the event bus at redis://127.0.0.1:${port}: .*ECONNREFUSED`),
    );
    expect(r.stderr).not.toContain('[ioredis]');
  });
});

describe('store outages at start', () => {
  it('serve with a --store that never answers exits 1 within 10 s with one line naming it', async () => {
    // Accepts connections and never says a word: a hung PostgreSQL.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    try {
      const started = Date.now();
      const r = await run(
        [
          'serve',
          '--port',
          '0',
          '--relay-port',
          '0',
          '--data',
          tempDir(),
          '--store',
          `postgres://airlock:secret@127.0.0.1:${port}/db`,
        ],
        testEnv(),
      );
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `cannot reach the store at postgres://airlock:\\*\\*\\*@127.0.0.1:${port}/db: .*; start PostgreSQL`,
        ),
      );
      expect(r.stderr).not.toContain('secret');
    } finally {
      silent.close();
    }
  });
});
