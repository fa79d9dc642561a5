/**
 * The scene door in the cluster suite (issue 15 item 6, point P13, and the
 * Done-when's 20-page pipeline): three instances on PostgreSQL and Redis
 * behind nginx serve one open project — same scene, same epoch, one
 * history — and a pipeline whose instance is SIGKILLed mid-run goes on
 * elsewhere from its last logged page, ending `completed` once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createCanvas } from '@napi-rs/canvas';
import pg from 'pg';
import { connectClient } from '../helpers/mcp-client.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { describeWithServices } from '../services/index.js';
import { PG_URL } from '../services/postgres.js';
import { startCluster, type Cluster } from './cluster.js';
import { openEvents, type EventStream } from './sse.js';

let cluster: Cluster;
const streams: EventStream[] = [];
afterAll(async () => {
  for (const s of streams) s.close();
  await cluster?.close();
});

interface SceneView {
  epoch: number;
  scene: {
    project: { name: string };
    pages: { id: string; name: string; nodes: { kind: Record<string, { role?: string }> }[] }[];
  };
}

const owner = () => ({ authorization: `Bearer ${cluster.ownerToken}` });
const api = async (base: string, path: string, body?: unknown, method = 'POST') => {
  const res = await fetch(`${base}/api/v1/${path}`, {
    method: body === undefined && method === 'POST' ? 'GET' : method,
    headers: { ...owner(), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
};
const sceneAt = async (base: string) => {
  const res = await api(base, 'scene.json');
  expect(res.status).toBe(200);
  return res.body as unknown as SceneView;
};
const events = async (base: string) => {
  const s = await openEvents(base, cluster.ownerToken);
  streams.push(s);
  return s;
};

/** A small page with a dark word on a light ground, and a text node over the word. */
async function pageImage(): Promise<Uint8Array> {
  const canvas = createCanvas(240, 160);
  const g = canvas.getContext('2d');
  g.fillStyle = '#f0f0f0';
  g.fillRect(0, 0, 240, 160);
  g.fillStyle = '#000';
  g.font = 'bold 28px "DejaVu Sans"';
  g.fillText('HELLO', 40, 90);
  return new Uint8Array(await canvas.encode('png'));
}

/** Uploads `count` pages named `<prefix>-NN` and gives each a text node; returns their ids. */
async function addPages(prefix: string, count: number): Promise<string[]> {
  const bytes = await pageImage();
  const form = new FormData();
  for (let i = 1; i <= count; i++)
    form.append(
      'file',
      new Blob([new Uint8Array(bytes)], { type: 'image/png' }),
      `${prefix}-${String(i).padStart(2, '0')}.png`,
    );
  const up = await fetch(`${cluster.url}/api/v1/pages`, {
    method: 'POST',
    headers: owner(),
    body: form,
  });
  expect(up.status).toBe(201);
  const { scene } = await sceneAt(cluster.url);
  const pages = scene.pages.filter((p) => p.name.startsWith(`${prefix}-`));
  expect(pages).toHaveLength(count);
  const ops = pages.map((p) => ({
    addNode: {
      page: p.id,
      node: {
        id: randomUUID(),
        transform: { x: 36, y: 60, width: 120, height: 40, rotationDeg: 0 },
        visible: true,
        kind: { text: { text: 'HELLO' } },
      },
    },
  }));
  const added = await api(cluster.url, 'history/apply', { op: { batch: { ops, label: prefix } } });
  expect(added.status).toBe(200);
  return pages.map((p) => p.id);
}

await describeWithServices(
  'cluster: the scene door on three instances behind nginx',
  ['postgres', 'redis'],
  () => {
    beforeAll(async () => {
      cluster = await startCluster({ leaseMs: 3_000, doors: 'ledger,scene' });
    }, 90_000);

    it('P13: a project opened through one instance is served with the same scene and epoch by every instance; ops sent to different instances build one history', async () => {
      const created = await api(cluster.instanceUrl(0), 'projects', { name: 'Shared' });
      expect(created.status).toBe(201);
      for (let i = 0; i < 3; i++) {
        const view = await sceneAt(cluster.instanceUrl(i));
        expect(view).toMatchObject({ epoch: 0, scene: { project: { name: 'Shared' } } });
      }
      // One op through each instance in turn: epochs follow one counter.
      const epochs: number[] = [];
      for (let n = 0; n < 6; n++) {
        const page = { id: randomUUID(), name: `p${n}`, width: 10, height: 10, nodes: [] };
        const res = await api(cluster.instanceUrl(n % 3), 'history/apply', {
          op: { addPage: { page } },
        });
        expect(res.status).toBe(200);
        epochs.push(res.body.epoch as number);
      }
      expect(epochs).toEqual([1, 2, 3, 4, 5, 6]);
      // Concurrent writers on all three instances: every op lands once, no epoch twice.
      const concurrent = await Promise.all(
        Array.from({ length: 9 }, (_, n) =>
          api(cluster.instanceUrl(n % 3), 'history/apply', {
            op: {
              addPage: {
                page: { id: randomUUID(), name: `c${n}`, width: 10, height: 10, nodes: [] },
              },
            },
          }),
        ),
      );
      expect(concurrent.map((r) => r.status)).toEqual(Array(9).fill(200));
      expect(concurrent.map((r) => r.body.epoch as number).sort((a, b) => a - b)).toEqual([
        7, 8, 9, 10, 11, 12, 13, 14, 15,
      ]);
      // Undo on one instance is seen by the others.
      const undone = await api(cluster.instanceUrl(2), 'history/undo', {});
      expect(undone.body.epoch).toBe(16);
      const views = await Promise.all([0, 1, 2].map((i) => sceneAt(cluster.instanceUrl(i))));
      for (const view of views) {
        expect(view.epoch).toBe(16);
        expect(view.scene.pages).toHaveLength(14);
        expect(view.scene).toEqual(views[0]!.scene);
      }
      // A restarted instance comes back with the open project, at the same epoch.
      await cluster.kill(0);
      await cluster.restart(0);
      const back = await sceneAt(cluster.instanceUrl(0));
      expect(back.epoch).toBe(16);
      expect(back.scene).toEqual(views[0]!.scene);
      // Closing on one instance closes it everywhere.
      expect(
        (await api(cluster.instanceUrl(1), 'projects/current', undefined, 'DELETE')).status,
      ).toBe(204);
      expect((await api(cluster.instanceUrl(2), 'scene.json')).status).toBe(409);
      const listed = await api(cluster.instanceUrl(2), 'projects');
      expect((listed.body.projects as { name: string }[]).map((p) => p.name)).toEqual(['Shared']);
    }, 120_000);

    it('an export made through one instance is fetched with the same bytes from every instance; a deleted project leaves no rows and its export url answers 404', async () => {
      const created = await api(cluster.instanceUrl(0), 'projects', { name: 'Exports' });
      expect(created.status).toBe(201);
      const [pageId] = await addPages('x', 1);
      const page = (await sceneAt(cluster.url)).scene.pages.find((p) => p.id === pageId)!;
      const source = page.nodes.find((n) => n.kind.image?.role === 'source')!.kind.image as {
        blob: string;
      };
      // The source image stands in as the rendered one, so a pdf can be made.
      const rendered = { ...source, role: 'rendered', opacity: 1 };
      const added = await api(cluster.url, 'history/apply', {
        op: {
          addNode: {
            page: pageId,
            node: {
              id: randomUUID(),
              transform: { x: 0, y: 0, width: 240, height: 160, rotationDeg: 0 },
              visible: true,
              kind: { image: rendered },
            },
          },
        },
      });
      expect(added.status).toBe(200);
      const mcp = await connectClient(`${cluster.instanceUrl(1)}/mcp`, {
        name: 'cluster-scene',
        token: cluster.agentToken,
      });
      const result = (await mcp.callTool({ name: 'koharu.export', arguments: { format: 'pdf' } }))
        .structuredContent as { url: string; uri: string; bytes: number };
      await mcp.close();
      expect(result.url).toMatch(/^\/api\/v1\/blobs\/[0-9a-f]{64}$/);
      const fetched = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const res = await fetch(`${cluster.url}${result.url}`, { headers: owner() });
          return {
            status: res.status,
            type: res.headers.get('content-type'),
            bytes: Buffer.from(await res.arrayBuffer()),
          };
        }),
      );
      for (const f of fetched) {
        expect(f).toMatchObject({ status: 200, type: 'application/pdf' });
        expect(f.bytes.equals(fetched[0]!.bytes)).toBe(true);
      }
      expect(fetched[0]!.bytes.byteLength).toBe(result.bytes);

      const db = new pg.Client({ connectionString: PG_URL });
      await db.connect();
      const rows = async (pattern: string) =>
        (
          await db.query<{ collection: string; key: string }>(
            `SELECT collection, key FROM "${cluster.schema}".records WHERE key LIKE $1 OR value LIKE $1`,
            [pattern],
          )
        ).rows;
      try {
        const record = (
          await db.query<{ value: string }>(
            `SELECT value FROM "${cluster.schema}".records WHERE collection = 'scene.projects' AND value LIKE '%"Exports"%'`,
          )
        ).rows[0]!;
        const log = (JSON.parse(record.value) as { log: string }).log;
        expect((await rows(`%${log}%`)).length).toBeGreaterThan(2);
        const id = (created.body as { id: string }).id;
        expect(
          (await api(cluster.instanceUrl(2), `projects/${id}`, undefined, 'DELETE')).status,
        ).toBe(204);
        expect(await rows(`%${log}%`)).toEqual([]);
      } finally {
        await db.end();
      }
      // With another project open, the export url answers 404 on every instance.
      expect((await api(cluster.url, 'projects', { name: 'After' })).status).toBe(201);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${cluster.instanceUrl(i)}${result.url}`, { headers: owner() });
        expect(res.status).toBe(404);
      }
    }, 60_000);

    it('SIGKILLs the instance running a 20-page pipeline mid-run 10 times: each run ends completed once, each page processed once', async () => {
      const opened = await api(cluster.url, 'projects', { name: 'Pipelines' });
      expect(opened.status).toBe(201);
      for (let run = 0; run < 10; run++) {
        const pages = await addPages(`r${run}`, 20);
        const before = (await sceneAt(cluster.url)).epoch;
        const runner = run % 3;
        const watcher = (runner + 1) % 3;
        const watch = await events(cluster.instanceUrl(watcher));
        const started = await api(cluster.instanceUrl(runner), 'pipelines', {
          steps: ['fill'],
          pages,
        });
        expect(started.status).toBe(202);
        const jobId = String(started.body.jobId);
        const mine = (event: string) =>
          watch
            .events()
            .filter((f) => f.data.event === event && (f.data.jobId ?? f.data.id) === jobId);
        // Killed once a few pages are done, before the last.
        const killAfter = 2 + (run % 5) * 3;
        await waitFor(
          () => mine('jobProgress').some((f) => (f.data.currentPage as number) >= killAfter),
          { timeoutMs: 30_000, message: `run ${run}: page ${killAfter}` },
        );
        await cluster.kill(runner);
        const restarted = cluster.restart(runner);
        await waitFor(() => mine('jobFinished').length > 0, {
          timeoutMs: 30_000,
          message: `run ${run}: jobFinished after the hand-off`,
        });
        await restarted;
        await holdsFor(() => mine('jobFinished').length === 1, 300, {
          message: `run ${run}: one jobFinished (the hand-off does not finish the run twice)`,
        });
        expect(mine('jobFinished').map((f) => [f.data.status, f.data.error])).toEqual([
          ['completed', undefined],
        ]);
        // The kill came mid-run: another instance took the run over and went through the
        // pages again from the first (skipping those logged), so the page count went back.
        const seen = mine('jobProgress').map((f) => f.data.currentPage as number);
        expect(
          seen.some((p, i) => i > 0 && p < seen[i - 1]!),
          `run ${run}: ${seen.join(',')}`,
        ).toBe(true);
        expect(seen.at(-1)).toBe(20);
        const after = await sceneAt(cluster.url);
        // One history step per page: none skipped, none made twice.
        expect(after.epoch - before).toBe(20);
        for (const id of pages) {
          const page = after.scene.pages.find((p) => p.id === id)!;
          const inpainted = page.nodes.filter((n) => n.kind.image?.role === 'inpainted');
          expect(inpainted, `run ${run}, page ${page.name}`).toHaveLength(1);
        }
        const job = await api(cluster.url, `jobs/${jobId}`);
        expect(job.body).toMatchObject({ status: 'completed', warnings: [] });
        watch.close();
      }
    }, 300_000);
  },
);
