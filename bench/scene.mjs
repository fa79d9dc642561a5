/**
 * Scene door benchmark (issue #3): ops applied per second through the
 * project history with its fsynced op log (single ops and 100-op batches),
 * undo/redo per second, and `GET scene.json` time and size for a 200-page
 * scene. Baseline, measured in the same run: the same history in memory
 * (no log), so the ratio is the cost of durability.
 *
 * `node bench/scene.mjs` (imports from dist/; `npm run build` first), or as
 * the `scene` part of `npm run bench`. Env: BENCH_SCENE_OPS (1000).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, URLSearchParams } from 'node:url';
import { openHistory } from '../dist/kernel/writes/history.js';
import { silentLogger } from '../dist/kernel/logger.js';
import { sceneReducer } from '../dist/doors/scene/model/reducer.js';
import { emptyScene } from '../dist/doors/scene/model/model.js';
import { createSceneDoors } from '../dist/doors/scene/index.js';
import { fileFolderStorage } from '../dist/store/folder-file.js';
import { createKernel } from '../dist/kernel/kernel.js';
import { createEventBus } from '../dist/kernel/events/events.js';
import { openStore } from '../dist/store/open.js';

const OPS = Number.parseInt(process.env.BENCH_SCENE_OPS ?? '', 10) || 1000;
const HASH = 'a'.repeat(64);
const round = (x) => Math.round(x * 10) / 10;

const page = (nodes = []) => ({ id: randomUUID(), name: 'p', width: 1200, height: 1800, nodes });
const textNode = (i) => ({
  id: randomUUID(),
  transform: { x: i, y: i, width: 200, height: 80, rotationDeg: 0 },
  visible: true,
  kind: { text: { text: `line ${i}`, translation: `linha ${i}`, confidence: 0.9 } },
});
const sourceNode = () => ({
  id: randomUUID(),
  transform: { x: 0, y: 0, width: 1200, height: 1800, rotationDeg: 0 },
  visible: true,
  kind: {
    image: { role: 'source', blob: HASH, opacity: 1, naturalWidth: 1200, naturalHeight: 1800 },
  },
});

async function perSecond(n, fn) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return round((n * 1e9) / Number(process.hrtime.bigint() - t));
}

async function historyLegs(history) {
  const p = page();
  await history.apply([{ addPage: { page: p } }], 'page');
  const single = await perSecond(OPS, (i) =>
    history.apply([{ addNode: { page: p.id, node: textNode(i) } }], 'node'),
  );
  const batches = Math.max(1, Math.floor(OPS / 100));
  const batchPerSecond = await perSecond(batches, () =>
    history.apply(
      [
        {
          batch: {
            label: 'b',
            ops: Array.from({ length: 100 }, (_, i) => ({
              addNode: { page: p.id, node: textNode(i) },
            })),
          },
        },
      ],
      'b',
    ),
  );
  const undo = await perSecond(OPS, () => history.undo());
  const redo = await perSecond(OPS, () => history.redo());
  return {
    singleOpsPerSecond: single,
    batchOpsPerSecond: round(batchPerSecond * 100),
    undoPerSecond: undo,
    redoPerSecond: redo,
  };
}

export async function benchScene() {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-bench-scene-'));
  try {
    const memory = await historyLegs(
      await openHistory({
        reducer: sceneReducer,
        initial: emptyScene('m', new Date().toISOString()),
      }),
    );
    const [door] = await createSceneDoors({
      data: dir,
      storage: fileFolderStorage,
      logger: silentLogger,
      env: {},
      relayPort: 0,
      openapi: [],
      config: {},
    });
    // REST writes run as tool calls through the kernel, so the door needs a started kernel.
    const { store, blobs } = await openStore({ data: join(dir, 'kernel') });
    const kernel = createKernel({
      store,
      blobs,
      events: await createEventBus(),
      logger: silentLogger,
    });
    kernel.mount(door);
    await kernel.start();
    const route = (method, path) =>
      door.http.routes.find((r) => r.method === method && r.path === path);
    await route('POST', 'projects').handler({
      params: {},
      query: new URLSearchParams(),
      body: { name: 'bench' },
      headers: {},
    });
    // The door's own project history (file op log, fsync per entry).
    const apply = route('POST', 'history/apply');
    const undoRoute = route('POST', 'history/undo');
    const redoRoute = route('POST', 'history/redo');
    const req = (body) => ({ params: {}, query: new URLSearchParams(), body, headers: {} });
    const durable = await historyLegs({
      apply: async ([op]) => {
        const r = await apply.handler(req({ op }));
        // A route answers a response, or a kernel failure ({ok: false, code, message}).
        if (r.ok === false || r.status !== 200) throw new Error(JSON.stringify(r));
      },
      undo: () => undoRoute.handler(req(undefined)),
      redo: () => redoRoute.handler(req(undefined)),
    });

    // A 200-page scene (a source image and 12 text nodes per page), then GET scene.json.
    await route('POST', 'projects').handler(req({ name: 'big' }));
    const pages = Array.from({ length: 200 }, () =>
      page([sourceNode(), ...Array.from({ length: 12 }, (_, i) => textNode(i))]),
    );
    await apply.handler(
      req({ op: { batch: { label: 'pages', ops: pages.map((p) => ({ addPage: { page: p } })) } } }),
    );
    const sceneJson = route('GET', 'scene.json');
    const times = [];
    let bytes = 0;
    for (let i = 0; i < 20; i++) {
      const t = process.hrtime.bigint();
      const r = await sceneJson.handler(req(undefined));
      bytes = Buffer.byteLength(JSON.stringify(r.body));
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    times.sort((a, b) => a - b);
    await kernel.close();
    await store.close();
    const ratio = (a, b) => Math.round((a / b) * 100) / 100;
    return {
      ops: OPS,
      durable,
      inMemory: memory,
      ratios: Object.fromEntries(
        Object.keys(durable).map((k) => [k, ratio(durable[k], memory[k])]),
      ),
      sceneJson200Pages: { medianMs: round(times[10]), bytes },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await benchScene();
  console.log(
    `scene history, ${r.ops} ops per row; durable = project op log with fsync, baseline = in memory`,
  );
  for (const k of Object.keys(r.durable))
    console.log(
      `  ${k.padEnd(20)} durable ${String(r.durable[k]).padStart(10)}  in memory ${String(r.inMemory[k]).padStart(10)}  ×${r.ratios[k]}`,
    );
  console.log(
    `  scene.json, 200 pages: median ${r.sceneJson200Pages.medianMs} ms, ${r.sceneJson200Pages.bytes} bytes`,
  );
}
